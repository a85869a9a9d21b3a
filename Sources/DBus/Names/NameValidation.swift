/// Rules shared by the validated D-Bus name types.
///
/// Checks walk Unicode scalars rather than `Character`s: every valid D-Bus name is ASCII, and
/// grapheme clustering would hide a combining mark glued onto an otherwise valid letter.
enum NameValidation {
    /// The D-Bus limit for bus, interface, member and error names and for signatures, in bytes.
    static let maximumLength = 255

    /// `[A-Za-z]`
    static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A: true
        default: false
        }
    }

    /// `[0-9]`
    static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        (0x30...0x39).contains(scalar.value)
    }

    /// `[A-Za-z0-9_]`: object path elements and everything after an identifier's first character.
    static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        isLetter(scalar) || isDigit(scalar) || scalar == "_"
    }

    /// The error every name type throws, naming the kind of name, the value and the broken rule.
    static func failure(_ kind: String, _ value: String, _ rule: String) -> DBusError {
        DBusError(.invalidName, message: "invalid \(kind) \(quoted(value)): \(rule)")
    }

    /// The value in quotes; escaping keeps control characters and NUL visible in the message.
    static func quoted(_ value: some StringProtocol) -> String {
        String(reflecting: String(value))
    }

    /// A character for an error message; invisible and non-ASCII ones are shown as code points.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        if scalar.value >= 0x20 && scalar.value < 0x7F { return "'\(scalar)'" }
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Rejects the empty string and anything over ``maximumLength`` bytes.
    static func checkLength(_ value: String, kind: String) throws(DBusError) {
        if value.isEmpty { throw failure(kind, value, "must not be empty") }
        let length = value.utf8.count
        if length > maximumLength {
            throw failure(
                kind, value, "is \(length) bytes long, more than the maximum of \(maximumLength)")
        }
    }

    /// Why `element` is not of the form `[A-Za-z_][A-Za-z0-9_]*`, or `nil` when it is.
    static func identifierViolation(_ element: Substring.UnicodeScalarView) -> String? {
        guard let first = element.first else { return "must not be empty" }
        if isDigit(first) { return "must not start with a digit" }
        for scalar in element where !isWordCharacter(scalar) {
            return "contains \(describe(scalar)), only [A-Za-z0-9_] is allowed"
        }
        return nil
    }

    /// Interface and error names: two or more identifiers separated by '.', at most 255 bytes.
    static func validateDottedName(_ value: String, kind: String) throws(DBusError) {
        try checkLength(value, kind: kind)
        if value.unicodeScalars.first == "." {
            throw failure(kind, value, "must not start with '.'")
        }
        if value.unicodeScalars.last == "." { throw failure(kind, value, "must not end with '.'") }
        let elements = value.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false)
        if elements.count < 2 {
            throw failure(kind, value, "must have at least two elements separated by '.'")
        }
        for element in elements {
            if element.isEmpty { throw failure(kind, value, "must not contain an empty element") }
            if let violation = identifierViolation(element) {
                throw failure(kind, value, "element \(quoted(String(element))) \(violation)")
            }
        }
    }
}
