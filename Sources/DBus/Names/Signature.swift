/// A validated D-Bus type signature such as `sa{sv}as`: a sequence of complete types.
///
/// A signature is at most 255 bytes; arrays and structures may each nest at most 32 deep, and
/// arrays, structures and dictionary entries together at most 64 deep.
public struct Signature: Sendable, Hashable, CustomStringConvertible {
    /// The signature as text, e.g. `a{sv}`.
    public let rawValue: String
    /// The complete types of the signature, in order; empty for the empty signature.
    public let types: [DBusType]

    /// The most arrays one type may nest.
    static let maximumArrayDepth = 32
    /// The most structures one type may nest.
    static let maximumStructDepth = 32
    /// The most containers of any kind one type may nest.
    static let maximumTotalDepth = 64

    /// Parses and validates `string`.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` naming the broken rule.
    public init(_ string: String) throws(DBusError) {
        var parser = Parser(text: string)
        types = try parser.parseAll()
        rawValue = string
    }

    /// The signature of `types`, validated against the same rules as a parsed signature.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidName`` when the types nest too
    ///   deeply, spell more than 255 bytes, hold an empty structure or a non-basic dictionary key.
    public init(types: [DBusType]) throws(DBusError) {
        // `DBusType.signature` recurses once per nesting level with no bound; this writer stops
        // after 256 bytes, so an absurdly deep type is rejected without exhausting the stack.
        var text = ""
        for type in types {
            if !Self.append(type, to: &text) {
                throw NameValidation.failure(
                    "signature", text + "…",
                    "is longer than the maximum of \(NameValidation.maximumLength) bytes")
            }
        }
        // Types and text correspond one to one, so parsing the text checks the types.
        try self.init(text)
    }

    private init(uncheckedText: String, types: [DBusType]) {
        rawValue = uncheckedText
        self.types = types
    }

    /// The empty signature, that of a message body without arguments.
    public static let empty = Signature(uncheckedText: "", types: [])

    /// Whether the signature holds exactly one complete type, as a variant's signature must.
    public var isSingleCompleteType: Bool { types.count == 1 }

    /// The signature text.
    public var description: String { rawValue }

    /// Signatures are equal when their text is; the types follow from it.
    public static func == (lhs: Signature, rhs: Signature) -> Bool {
        lhs.rawValue == rhs.rawValue
    }

    /// Hashes the text only, matching ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawValue)
    }

    /// Parses a signature that must hold exactly one complete type, such as a variant's.
    static func parseSingle(_ string: String) throws(DBusError) -> DBusType {
        let signature = try Signature(string)
        guard signature.types.count == 1, let type = signature.types.first else {
            throw NameValidation.failure(
                "signature", string,
                "must be exactly one complete type, found \(signature.types.count)")
        }
        return type
    }

    /// Appends the code of `type` unless the text would grow past the length limit.
    ///
    /// Every container writes a byte before descending, so recursion stops within 256 levels.
    private static func append(_ type: DBusType, to text: inout String) -> Bool {
        if text.utf8.count >= NameValidation.maximumLength { return false }
        switch type {
        case .array(let element):
            text.append("a")
            return append(element, to: &text)
        case .dictionary(let key, let value):
            text.append("a{")
            guard append(key, to: &text), append(value, to: &text) else { return false }
            text.append("}")
        case .structure(let fields):
            text.append("(")
            for field in fields {
                if !append(field, to: &text) { return false }
            }
            text.append(")")
        default:
            type.appendSignature(to: &text)
        }
        return text.utf8.count <= NameValidation.maximumLength
    }
}

extension Signature {
    /// How many containers enclose the type being parsed.
    private struct Depth {
        var arrays = 0
        var structs = 0
        var dictEntries = 0
    }

    /// A recursive-descent parser over the signature's bytes.
    ///
    /// Recursion is bounded: the length is checked first and every level consumes a byte.
    private struct Parser {
        let text: String
        let bytes: [UInt8]
        var index = 0

        init(text: String) {
            self.text = text
            bytes = Array(text.utf8)
        }

        mutating func parseAll() throws(DBusError) -> [DBusType] {
            if bytes.count > NameValidation.maximumLength {
                throw failure(
                    "is \(bytes.count) bytes long, more than the maximum of "
                        + "\(NameValidation.maximumLength)")
            }
            var types: [DBusType] = []
            while index < bytes.count {
                types.append(try parseCompleteType(Depth()))
            }
            return types
        }

        private func failure(_ rule: String) -> DBusError {
            NameValidation.failure("signature", text, rule)
        }

        /// Names the byte at `offset` for an error message.
        private func describeByte(at offset: Int) -> String {
            let byte = bytes[offset]
            if byte >= 0x80 { return "a non-ASCII character" }
            return NameValidation.describe(Unicode.Scalar(byte))
        }

        private func check(_ depth: Depth, at offset: Int) throws(DBusError) {
            if depth.arrays > Signature.maximumArrayDepth {
                throw failure(
                    "nests more than \(Signature.maximumArrayDepth) arrays "
                        + "(array at offset \(offset))")
            }
            if depth.structs > Signature.maximumStructDepth {
                throw failure(
                    "nests more than \(Signature.maximumStructDepth) structures "
                        + "(structure at offset \(offset))")
            }
            // libdbus allows 32 each of arrays, structures and dictionary entries in a
            // signature but refuses values nested more than 64 deep, so a deeper signature
            // could describe nothing that can be sent.
            if depth.arrays + depth.structs + depth.dictEntries > Signature.maximumTotalDepth {
                throw failure(
                    "nests more than \(Signature.maximumTotalDepth) containers "
                        + "(container at offset \(offset))")
            }
        }

        private mutating func parseCompleteType(_ depth: Depth) throws(DBusError) -> DBusType {
            let offset = index
            index += 1
            if let single = DBusType.single(code: bytes[offset]) { return single }
            switch bytes[offset] {
            case UInt8(ascii: "a"): return try parseArray(depth, at: offset)
            case UInt8(ascii: "("): return try parseStructure(depth, at: offset)
            case UInt8(ascii: ")"):
                throw failure("')' at offset \(offset) closes no structure")
            case UInt8(ascii: "{"):
                throw failure(
                    "dictionary entry at offset \(offset) is not directly inside an array")
            case UInt8(ascii: "}"):
                throw failure("'}' at offset \(offset) closes no dictionary entry")
            default:
                throw failure("unknown type code \(describeByte(at: offset)) at offset \(offset)")
            }
        }

        private mutating func parseArray(_ outer: Depth, at offset: Int) throws(DBusError)
            -> DBusType
        {
            var depth = outer
            depth.arrays += 1
            try check(depth, at: offset)
            guard index < bytes.count, bytes[index] != UInt8(ascii: ")"),
                bytes[index] != UInt8(ascii: "}")
            else {
                throw failure("array at offset \(offset) has no element type")
            }
            if bytes[index] == UInt8(ascii: "{") { return try parseDictionary(depth) }
            return .array(try parseCompleteType(depth))
        }

        private mutating func parseDictionary(_ outer: Depth) throws(DBusError) -> DBusType {
            let offset = index
            index += 1
            var depth = outer
            depth.dictEntries += 1
            try check(depth, at: offset)
            let entry = "dictionary entry at offset \(offset)"
            guard index < bytes.count else { throw failure("\(entry) is not closed") }
            if bytes[index] == UInt8(ascii: "}") {
                throw failure(
                    "\(entry) must hold exactly two types, a key and a value; it is empty")
            }
            let keyOffset = index
            let key = try parseCompleteType(depth)
            if !key.isBasic {
                throw failure(
                    "\(entry) has key type \(NameValidation.quoted(key.signature)) "
                        + "at offset \(keyOffset); keys must be basic types, not containers or 'v'")
            }
            guard index < bytes.count else { throw failure("\(entry) is not closed") }
            if bytes[index] == UInt8(ascii: "}") {
                throw failure("\(entry) must hold exactly two types, a key and a value; it has one")
            }
            let value = try parseCompleteType(depth)
            guard index < bytes.count else { throw failure("\(entry) is not closed") }
            if bytes[index] != UInt8(ascii: "}") {
                throw failure(
                    "\(entry) must hold exactly two types, a key and a value; it has more")
            }
            index += 1
            return .dictionary(key: key, value: value)
        }

        private mutating func parseStructure(_ outer: Depth, at offset: Int) throws(DBusError)
            -> DBusType
        {
            var depth = outer
            depth.structs += 1
            try check(depth, at: offset)
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else {
                    throw failure("structure at offset \(offset) is not closed")
                }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    break
                }
                fields.append(try parseCompleteType(depth))
            }
            if fields.isEmpty {
                throw failure("structure at offset \(offset) is empty; it needs at least one field")
            }
            return .structure(fields)
        }
    }
}
