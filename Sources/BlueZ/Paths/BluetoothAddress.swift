import DBus

/// A 48-bit Bluetooth device address such as `AA:BB:CC:DD:EE:FF`.
///
/// Parsed case-insensitively from six two-digit hex groups separated by ':'; always written
/// upper-case, as BlueZ writes addresses in `Address` properties and object paths. The first
/// group is the most significant byte (the one the random-address sub-type bits live in).
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The address as a 48-bit number: `AA:BB:CC:DD:EE:FF` is `0xAABBCCDDEEFF`.
    public let rawValue: UInt64

    /// The address whose 48-bit value is `rawValue`, or `nil` when it has more than 48 bits.
    public init?(rawValue: UInt64) {
        guard rawValue >> 48 == 0 else { return nil }
        self.rawValue = rawValue
    }

    /// The address with these six bytes, most significant (first written) first.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.invalidValue` unless there are exactly six.
    public init(bytes: [UInt8]) throws(DBusError) {
        guard bytes.count == 6 else {
            throw DBusError(.invalidValue, message: "a Bluetooth address has 6 bytes, not \(bytes.count)")
        }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Parses `AA:BB:CC:DD:EE:FF`, upper- or lower-case.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.invalidValue` for anything else: other
    ///   separators, missing or extra groups, groups that are not two hex digits.
    public init(_ string: String) throws(DBusError) {
        guard let value = Self.parse(string, separator: UInt8(ascii: ":")) else {
            throw DBusError(
                .invalidValue,
                message: "\(Self.quoted(string)) is not a Bluetooth address of the form AA:BB:CC:DD:EE:FF")
        }
        rawValue = value
    }

    /// The six bytes, most significant (first written) first.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (40 - 8 * UInt64($0))) }
    }

    /// `AA:BB:CC:DD:EE:FF`, upper-case.
    public var description: String { formatted(separator: ":") }

    /// `AA-BB-CC-DD-EE-FF`: the `Alias` bluetoothd reports for a device without a name
    /// (bluez-dbus-api.md §9 Q21); compare an alias with it to tell "no name".
    public var aliasFallback: String { formatted(separator: "-") }

    /// The six groups, upper-case, joined by `separator` (one ASCII character): written into
    /// one buffer, since every advertisement a scan reports names its address.
    func formatted(separator: String) -> String {
        guard let mark = separator.utf8.first, separator.utf8.count == 1 else {
            return bytes.map(Self.hexPair).joined(separator: separator)
        }
        let digits: StaticString = "0123456789ABCDEF"
        return String(unsafeUninitializedCapacity: 17) { buffer in
            digits.withUTF8Buffer { hex in
                for group in 0..<6 {
                    let byte = Int(truncatingIfNeeded: rawValue >> (40 - 8 * UInt64(group))) & 0xFF
                    buffer[3 * group] = hex[byte >> 4]
                    buffer[3 * group + 1] = hex[byte & 0x0F]
                    if group < 5 { buffer[3 * group + 2] = mark }
                }
            }
            return 17
        }
    }

    /// Orders addresses by their numeric value.
    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// Two upper-case hex digits.
    static func hexPair(_ byte: UInt8) -> String {
        String([hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
    }

    private static let hexDigits = Array("0123456789ABCDEF")

    /// The 48-bit value of six two-digit hex groups (either case) joined by `separator`, or
    /// `nil`. Read byte by byte: every device a scan reports has its address parsed.
    /// The separator is a byte: reading a `Character`'s ASCII value walked the character's
    /// scalars at every call.
    static func parse(_ string: some StringProtocol, separator: UInt8) -> UInt64? {
        // Through the bytes where the text holds them in one piece (a native string does): a
        // `UTF8View` iterator costs more per byte than the parse itself.
        if let parsed = string.utf8.withContiguousStorageIfAvailable({ parse(bytes: $0, separator: separator) }) {
            return parsed
        }
        return parse(bytes: string.utf8, separator: separator)
    }

    /// ``parse(_:separator:)`` on the text's bytes, for callers that hold bytes already.
    static func parse(bytes: some Sequence<UInt8>, separator: UInt8) -> UInt64? {
        var utf8 = bytes.makeIterator()
        var value: UInt64 = 0
        for group in 0..<6 {
            if group > 0 {
                guard utf8.next() == separator else { return nil }
            }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                return nil
            }
            value = value << 8 | UInt64(high << 4 | low)
        }
        return utf8.next() == nil ? value : nil
    }

    /// The value of one ASCII hex digit (either case), or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func quoted(_ string: String) -> String {
        string.count > 40 ? "\"\(string.prefix(40))…\"" : "\"\(string)\""
    }
}

extension BluetoothAddress: DBusRepresentable {
    /// `s`: addresses travel as text, e.g. the `Address` property.
    public static var dbusType: DBusType { .string }

    /// Decodes an `s` holding an address.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` for another type, `.invalidValue`
    ///   for a malformed address.
    public init(dbusValue: DBusValue) throws(DBusError) {
        try self.init(try String(dbusValue: dbusValue))
    }

    /// An `s`, upper-case.
    public var dbusValue: DBusValue { .string(description) }
}
