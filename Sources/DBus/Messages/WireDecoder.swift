import CDBus
import Foundation

/// Reads a received message's body from its wire form: the bytes libdbus validated when they
/// arrived (signature, alignment, UTF-8, nesting, lengths), read in one pass with no call into
/// libdbus per value.
///
/// libdbus's iterators cost a call, several checks and a signature walk per value read: for a
/// BlueZ device's properties (`a{sv}` with a dozen entries) that was the larger part of what a
/// scan paid per advertisement. The message is copied out once (`dbus_message_marshal`, one
/// allocation and a copy of a few hundred bytes) and read here.
///
/// Every read is bounds-checked, and anything unexpected (a file descriptor, which only
/// libdbus can hand out; bytes that do not parse) makes the read return nil: the caller then
/// decodes with libdbus's iterators, so a gap in this reader can cost time, never a value.
struct WireDecoder: ~Copyable {
    private let bytes: UnsafeRawBufferPointer
    private var offset: Int
    /// The message's byte order differs from this machine's.
    private let swapped: Bool

    /// The body starts at `offset` in `bytes` (a multiple of 8 from the message's start, so
    /// alignment counts from the body's start as it does from the message's).
    private init(bytes: UnsafeRawBufferPointer, offset: Int, swapped: Bool) {
        self.bytes = bytes
        self.offset = offset
        self.swapped = swapped
    }

    /// Runs `read` over the body of `message` with its signature; nil when the message
    /// cannot be copied out or `read` returns nil.
    static func withBody<Result>(
        of message: OpaquePointer, _ read: (inout WireDecoder, UnsafeBufferPointer<UInt8>) -> Result?
    ) -> Result? {
        guard let signature = dbus_message_get_signature(message) else { return nil }
        var pointer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message, &pointer, &length) != 0, let pointer else { return nil }
        defer { dbus_free(pointer) }
        let whole = UnsafeRawBufferPointer(start: pointer, count: Int(length))
        // The fixed header: byte order, type, flags, version, body length, serial, and the
        // length of the header fields' array, which ends padded to 8.
        guard whole.count >= 16 else { return nil }
        let swapped: Bool
        switch whole[0] {
        case UInt8(ascii: "l"): swapped = UInt32(littleEndian: 1) != 1
        case UInt8(ascii: "B"): swapped = UInt32(bigEndian: 1) != 1
        default: return nil
        }
        func word(at offset: Int) -> Int {
            let raw = whole.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
            return Int(swapped ? raw.byteSwapped : raw)
        }
        let bodyLength = word(at: 4)
        let bodyStart = (16 + word(at: 12) + 7) & ~7
        guard bodyStart <= whole.count, bodyLength == whole.count - bodyStart else { return nil }
        let count = strlen(signature)
        return signature.withMemoryRebound(to: UInt8.self, capacity: count) { codes in
            var decoder = WireDecoder(bytes: whole, offset: bodyStart, swapped: swapped)
            return read(&decoder, UnsafeBufferPointer(start: codes, count: count))
        }
    }

    /// For a message in wire form (a fuzzer's input): whether the body this reader reads is
    /// the one libdbus's iterators read; nil when libdbus refuses the bytes, or this reader or
    /// the iterators leave the body alone.
    static func agreesWithIterators(onWire bytes: [UInt8]) -> Bool? {
        withDemarshalled(bytes) { raw in
            guard let wire = withBody(of: raw, { decoder, signature in decoder.body(signature) }),
                let iterated = try? MessageDecoder.decodeBodyThroughIterators(raw)
            else { return nil }
            // Compared as text: NaN is not == NaN.
            return "\(wire)" == "\(iterated)"
        }
    }

    /// Runs `body` with the libdbus message that `bytes` (a fuzzer's input) hold in wire form;
    /// nil when libdbus refuses them.
    static func withDemarshalled<Result>(_ bytes: [UInt8], _ body: (OpaquePointer) -> Result?) -> Result? {
        let raw = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                dbus_message_demarshal($0.baseAddress, Int32(clamping: $0.count), nil)
            }
        }
        guard let raw else { return nil }
        defer { dbus_message_unref(raw) }
        return body(raw)
    }

    /// Whether every byte of the body has been read.
    var isAtEnd: Bool { offset == bytes.count }

    /// Where the cursor is: a reading that gave up part-way goes back there to read the same
    /// bytes another way.
    var position: Int {
        get { offset }
        set { offset = min(max(newValue, 0), bytes.count) }
    }

    // MARK: Whole bodies

    /// Every argument of a body with `signature`, as ``MessageDecoder`` decodes them.
    mutating func body(_ signature: UnsafeBufferPointer<UInt8>) -> [DBusValue]? {
        var values: [DBusValue] = []
        values.reserveCapacity(4)
        var index = 0
        while index < signature.count {
            guard let value = value(signature, &index, depth: 0) else { return nil }
            values.append(value)
        }
        return isAtEnd ? values : nil
    }

    // MARK: Values

    /// The value of the complete type at `signature[index]`, which moves past it.
    mutating func value(_ signature: UnsafeBufferPointer<UInt8>, _ index: inout Int, depth: Int) -> DBusValue? {
        guard index < signature.count, depth <= DBusValue.maximumNestingDepth else { return nil }
        let code = signature[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return read(UInt8.self).map { .byte($0) }
        case UInt8(ascii: "b"):
            guard let raw = read(UInt32.self), raw <= 1 else { return nil }
            return .boolean(raw == 1)
        case UInt8(ascii: "n"): return read(Int16.self).map { .int16($0) }
        case UInt8(ascii: "q"): return read(UInt16.self).map { .uint16($0) }
        case UInt8(ascii: "i"): return read(Int32.self).map { .int32($0) }
        case UInt8(ascii: "u"): return read(UInt32.self).map { .uint32($0) }
        case UInt8(ascii: "x"): return read(Int64.self).map { .int64($0) }
        case UInt8(ascii: "t"): return read(UInt64.self).map { .uint64($0) }
        case UInt8(ascii: "d"): return read(UInt64.self).map { .double(Double(bitPattern: $0)) }
        case UInt8(ascii: "s"): return string().map { .string($0) }
        case UInt8(ascii: "o"): return string().map { .objectPath(ObjectPath(unchecked: $0)) }
        case UInt8(ascii: "g"):
            guard let text = signatureText(), let parsed = try? Signature(text) else { return nil }
            return .signature(parsed)
        case UInt8(ascii: "v"): return variant(depth: depth).map { .variant($0) }
        case UInt8(ascii: "("): return structure(signature, &index, depth: depth)
        case UInt8(ascii: "a"): return array(signature, &index, depth: depth)
        default:
            // `h` (a file descriptor only libdbus can duplicate) and anything else.
            return nil
        }
    }

    /// The value inside a variant at the cursor: its signature, then the value.
    mutating func variant(depth: Int) -> DBusValue? {
        guard let length = read(UInt8.self).map(Int.init), offset + length < bytes.count,
            bytes[offset + length] == 0
        else { return nil }
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let inner = UnsafeBufferPointer(start: base + offset, count: length)
        offset += length + 1
        var index = 0
        guard let value = value(inner, &index, depth: depth + 1), index == length else { return nil }
        return value
    }

    /// The `a{sv}` at the cursor: its names, and each value taken out of its variant.
    mutating func properties(depth: Int) -> [String: DBusValue]? {
        guard let end = arrayEnd(elementAlignment: 8) else { return nil }
        // Sized once from the bytes (an entry takes about 32 of them): grown entry by entry, a
        // device's dozen properties resized the dictionary five times.
        let estimate = min((end - offset) / 32, 64)
        var properties = [String: DBusValue](room: estimate)
        while offset < end {
            guard align(8), let name = string(), let value = variant(depth: depth + 2) else { return nil }
            properties[name] = value
        }
        return offset == end ? properties : nil
    }

    /// The `a{sa{sv}}` at the cursor (an object's interfaces and their properties, as
    /// `InterfacesAdded` and `GetManagedObjects` carry them), with each name among `known`
    /// taken as it is (see ``interfaceName(known:)``).
    mutating func interfaces(known: [InterfaceName], depth: Int) -> [InterfaceName: [String: DBusValue]]? {
        guard let end = arrayEnd(elementAlignment: 8) else { return nil }
        // BlueZ's objects have three interfaces (their own, Properties and Introspectable).
        var interfaces = [InterfaceName: [String: DBusValue]](room: 3)
        while offset < end {
            guard align(8), let name = interfaceName(known: known), let properties = properties(depth: depth + 2)
            else { return nil }
            interfaces[name] = properties
        }
        return offset == end ? interfaces : nil
    }

    /// The `as` at the cursor.
    mutating func strings() -> [String]? {
        guard let end = arrayEnd(elementAlignment: 4) else { return nil }
        var strings: [String] = []
        while offset < end {
            guard let text = string() else { return nil }
            strings.append(text)
        }
        return offset == end ? strings : nil
    }

    /// The body of a `PropertiesChanged(sa{sv}as)`: the interface (one of `known` taken as it
    /// is, see ``interfaceName(known:)``), the changed properties and the invalidated names.
    mutating func propertiesChanged(
        known: [InterfaceName]
    ) -> (interface: InterfaceName, changed: [String: DBusValue], invalidated: [String])? {
        guard let name = interfaceName(known: known), let changed = properties(depth: 0), let invalidated = strings()
        else { return nil }
        return (name, changed, invalidated)
    }

    /// The string at the cursor as an interface name: one of `known` (or D-Bus's own
    /// `Properties` and `Introspectable`) when its bytes match, taken as it is; else validated.
    /// nil when it is not a valid name.
    mutating func interfaceName(known: [InterfaceName]) -> InterfaceName? {
        guard let length = read(UInt32.self).map(Int.init), offset + length < bytes.count,
            bytes[offset + length] == 0
        else { return nil }
        let text = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        offset += length + 1
        // By index and borrowed: a `for` loop's copy of each candidate, and a copy of its text
        // to reach the bytes, cost two reference counts per candidate and interface.
        for index in known.indices where Self.equal(known[index].rawValue, text) { return known[index] }
        if Self.equal(InterfaceName.properties.rawValue, text) { return .properties }
        if Self.equal(InterfaceName.introspectable.rawValue, text) { return .introspectable }
        return try? InterfaceName(String(decoding: text, as: UTF8.self))
    }

    /// Whether `name` is spelt as `bytes`: the lengths first (a native string knows its own),
    /// then the bytes where the string holds them contiguously.
    private static func equal(_ name: borrowing String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard name.utf8.count == bytes.count else { return false }
        let same = name.utf8.withContiguousStorageIfAvailable { utf8 in
            guard let left = utf8.baseAddress, let right = bytes.baseAddress else { return bytes.isEmpty }
            return memcmp(left, right, bytes.count) == 0
        }
        return same ?? name.utf8.elementsEqual(bytes)
    }

    private mutating func structure(
        _ signature: UnsafeBufferPointer<UInt8>, _ index: inout Int, depth: Int
    ) -> DBusValue? {
        guard align(8) else { return nil }
        var fields: [DBusValue] = []
        while index < signature.count, signature[index] != UInt8(ascii: ")") {
            guard let field = value(signature, &index, depth: depth + 1) else { return nil }
            fields.append(field)
        }
        guard index < signature.count, !fields.isEmpty else { return nil }
        index += 1
        return .structure(fields)
    }

    /// The array whose element type starts at `signature[index]` (just after its `a`).
    private mutating func array(_ signature: UnsafeBufferPointer<UInt8>, _ index: inout Int, depth: Int) -> DBusValue? {
        guard index < signature.count else { return nil }
        let elementStart = index
        guard let arrayType = Self.arrayType(signature, &index, depth: depth) else { return nil }
        let elementEnd = index
        guard let end = arrayEnd(elementAlignment: Self.alignment(of: signature[elementStart])) else { return nil }
        switch arrayType {
        case .array(.byte):
            let data = Data(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            return .bytes(data)
        case .dictionary(let keyType, let valueType):
            var entries: [DBusDictionaryEntry] = []
            while offset < end {
                // `{`, the key's code, the value's type, `}`.
                var cursor = elementStart + 1
                guard align(8), let key = value(signature, &cursor, depth: depth + 2),
                    let value = value(signature, &cursor, depth: depth + 2)
                else { return nil }
                entries.append(DBusDictionaryEntry(key, value))
            }
            guard offset == end else { return nil }
            return .dictionary(key: keyType, value: valueType, entries)
        case .array(let elementType):
            var elements: [DBusValue] = []
            while offset < end {
                var cursor = elementStart
                guard let element = value(signature, &cursor, depth: depth + 1), cursor == elementEnd else {
                    return nil
                }
                elements.append(element)
            }
            guard offset == end else { return nil }
            return .array(elementType, elements)
        default:
            return nil
        }
    }

    /// Reads an array's length and the padding before its first element; returns where its
    /// elements end.
    private mutating func arrayEnd(elementAlignment: Int) -> Int? {
        guard let length = read(UInt32.self).map(Int.init), align(elementAlignment), offset + length <= bytes.count
        else { return nil }
        return offset + length
    }

    // MARK: Basic reads

    /// A string's (or object path's) text: its length, its bytes, a NUL.
    mutating func string() -> String? {
        guard let length = read(UInt32.self).map(Int.init), offset + length < bytes.count,
            bytes[offset + length] == 0
        else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
        offset += length + 1
        return text
    }

    /// A signature's text: its length (one byte), its bytes, a NUL.
    private mutating func signatureText() -> String? {
        guard let length = read(UInt8.self).map(Int.init), offset + length < bytes.count,
            bytes[offset + length] == 0
        else { return nil }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
        offset += length + 1
        return text
    }

    /// Skips the padding to a multiple of `alignment` (zero bytes, as the format requires).
    private mutating func align(_ alignment: Int) -> Bool {
        let aligned = (offset + alignment - 1) & ~(alignment - 1)
        guard aligned <= bytes.count else { return false }
        offset = aligned
        return true
    }

    private mutating func read<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard align(size), offset + size <= bytes.count else { return nil }
        let raw = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return swapped ? raw.byteSwapped : raw
    }

    // MARK: Types

    /// How a value of the type starting with `code` is aligned.
    private static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "s"), UInt8(ascii: "o"),
            UInt8(ascii: "a"), UInt8(ascii: "h"):
            4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 1
        }
    }

    /// The type of the array whose element type starts at `signature[index]` (just after its
    /// `a`), which moves past the element: ``DBusType/dictionary(key:value:)`` for a `{…}`
    /// element, else ``DBusType/array(_:)``. The arrays a BlueZ message carries most come
    /// from a table, not built anew (an array's type is stored with every value of it).
    static func arrayType(_ signature: UnsafeBufferPointer<UInt8>, _ index: inout Int, depth: Int) -> DBusType? {
        for (codes, type) in commonArrays where signature.count - index >= codes.count {
            var matches = true
            for (offset, code) in codes.enumerated() where signature[index + offset] != code {
                matches = false
                break
            }
            if matches {
                index += codes.count
                return type
            }
        }
        guard index < signature.count else { return nil }
        guard signature[index] == UInt8(ascii: "{") else {
            return completeType(signature, &index, depth: depth + 1).map { .array($0) }
        }
        index += 1
        guard let key = completeType(signature, &index, depth: depth + 1), key.isBasic,
            let value = completeType(signature, &index, depth: depth + 1), index < signature.count,
            signature[index] == UInt8(ascii: "}")
        else { return nil }
        index += 1
        return .dictionary(key: key, value: value)
    }

    /// Array element signatures and the array types they make.
    private static let commonArrays: [([UInt8], DBusType)] = [
        (Array("y".utf8), .array(.byte)),
        (Array("{sv}".utf8), .dictionary(key: .string, value: .variant)),
        (Array("s".utf8), .array(.string)),
        (Array("o".utf8), .array(.objectPath)),
        (Array("{qv}".utf8), .dictionary(key: .uint16, value: .variant)),
        (Array("{yv}".utf8), .dictionary(key: .byte, value: .variant)),
        (Array("{sa{sv}}".utf8), .dictionary(key: .string, value: .dictionary(key: .string, value: .variant))),
    ]

    /// The complete type at `signature[index]`, which moves past it.
    private static func completeType(
        _ signature: UnsafeBufferPointer<UInt8>, _ index: inout Int, depth: Int
    ) -> DBusType? {
        guard index < signature.count, depth <= DBusValue.maximumNestingDepth else { return nil }
        let code = signature[index]
        index += 1
        if let single = DBusType.single(code: code) { return single }
        switch code {
        case UInt8(ascii: "a"): return arrayType(signature, &index, depth: depth)
        case UInt8(ascii: "("):
            var fields: [DBusType] = []
            while index < signature.count, signature[index] != UInt8(ascii: ")") {
                guard let field = completeType(signature, &index, depth: depth + 1) else { return nil }
                fields.append(field)
            }
            guard index < signature.count, !fields.isEmpty else { return nil }
            index += 1
            return .structure(fields)
        default:
            return nil
        }
    }
}
