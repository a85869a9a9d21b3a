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

    /// This value's signature code, e.g. `a{sv}`.
    var signatureCode: String {
        var out = ""
        appendSignature(to: &out)
        return out
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
