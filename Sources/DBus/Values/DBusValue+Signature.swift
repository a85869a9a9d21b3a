extension DBusValue {
    /// Appends this value's signature code without building its ``DBusType``: `type` boxes a
    /// new container type on every call, and replies and signals ask on every message.
    func appendSignature(to out: inout String) {
        switch self {
        case .bytes: out.append("ay")
        case .array(let element, _):
            out.append("a")
            element.appendSignature(to: &out)
        case .dictionary(let key, let value, _):
            out.append("a{")
            key.appendSignature(to: &out)
            value.appendSignature(to: &out)
            out.append("}")
        case .structure(let fields):
            out.append("(")
            for field in fields { field.appendSignature(to: &out) }
            out.append(")")
        default:
            // Basic types and variants: their type has no payload, so no box.
            type.appendSignature(to: &out)
        }
    }

    /// The length of ``signatureCode``, counted without spelling it out.
    var signatureLength: Int {
        switch self {
        case .bytes: 2
        case .array(let element, _): 1 + element.signatureLength
        case .dictionary(let key, let value, _): 3 + key.signatureLength + value.signatureLength
        case .structure(let fields): fields.reduce(2) { $0 + $1.signatureLength }
        default: 1
        }
    }

    /// Whether `values` are, one by one, of the complete types of `signature`: the check of a
    /// handler's reply, made on the types instead of a signature spelt out for every reply.
    static func values(_ values: [DBusValue], match signature: Signature) -> Bool {
        values.count == signature.types.count && zip(values, signature.types).allSatisfy { $0.hasType($1) }
    }

    /// This value's signature code, e.g. `a{sv}`.
    var signatureCode: String {
        // A characteristic's value, in every notification and read.
        if case .bytes = self { return "ay" }
        var out = ""
        appendSignature(to: &out)
        return out
    }

    /// Whether this value and `other` are of the same D-Bus type, decided for containers
    /// without building their ``DBusType``s (a mirror checks it at every property change).
    public func hasSameType(as other: DBusValue) -> Bool {
        switch (self, other) {
        case (.bytes, .bytes): true
        case (.bytes, .array(let element, _)), (.array(let element, _), .bytes): element == .byte
        case (.array(let element, _), .array(let otherElement, _)): element == otherElement
        case (.dictionary(let key, let value, _), .dictionary(let otherKey, let otherValue, _)):
            key == otherKey && value == otherValue
        default: type == other.type
        }
    }

    /// Whether this value is of type `expected`, decided without building its ``DBusType``.
    func hasType(_ expected: DBusType) -> Bool {
        switch (self, expected) {
        case (.bytes, .array(let element)): element == .byte
        case (.array(let element, _), .array(let wanted)): element == wanted
        case (.dictionary(let key, let value, _), .dictionary(let wantedKey, let wantedValue)):
            key == wantedKey && value == wantedValue
        case (.structure(let fields), .structure(let wanted)):
            fields.count == wanted.count && zip(fields, wanted).allSatisfy { $0.hasType($1) }
        case (.bytes, _), (.array, _), (.dictionary, _), (.structure, _): false
        default: type == expected
        }
    }
}
