import BlueZ

/// A Bluetooth UUID in its 16-, 32- or 128-bit form, compared canonically:
/// `BluetoothUUID("180D") == BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb")`.
///
/// Names the Bluetooth SIG services, characteristics and descriptors it knows:
/// `BluetoothUUID("180D").name == "Heart Rate"`.
public struct BluetoothUUID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The 128-bit lower-case dashed form BlueZ uses.
    public let uuidString: String

    /// Parses a UUID; returns nil when `text` is not one.
    public init?(validating text: String) {
        guard let canonical = BlueZUUID.canonical(text) else { return nil }
        uuidString = canonical
    }

    /// Parses a UUID written in 16-, 32- or 128-bit form (`"180D"`, `"0x180D"`,
    /// `"0000180d-0000-1000-8000-00805f9b34fb"`). A malformed string is kept as written
    /// (lower-cased), so it compares unequal to every real UUID instead of crashing; use
    /// ``init(validating:)`` to reject it.
    public init(_ text: String) {
        uuidString = BlueZUUID.canonical(text) ?? text.lowercased()
    }

    /// A 16-bit SIG-assigned UUID.
    public init(_ short: UInt16) {
        uuidString = BlueZUUID.canonical(String(format16: short)) ?? ""
    }

    /// Parses a literal, as ``init(_:)-(String)``.
    public init(stringLiteral value: String) { self.init(value) }

    /// Decodes from a string.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes as the shortest form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Whether the string was a valid UUID.
    public var isValid: Bool { BlueZUUID.canonical(uuidString) == uuidString }

    /// The 16-bit value when this UUID is on the Bluetooth base UUID.
    public var shortValue: UInt16? { BlueZUUID.shortForm(uuidString) }

    /// The name, when known: the SIG's for assigned numbers ("Heart Rate Measurement"), else a
    /// well-known vendor's for its 128-bit UUIDs ("Nordic UART Service").
    public var name: String? {
        if let shortValue { return AssignedNumbers.names[shortValue] }
        return VendorUUIDs.names[uuidString]
    }

    /// The shortest form: `180D` for SIG UUIDs, the 128-bit form otherwise.
    public var description: String {
        if let shortValue { return String(format16: shortValue) }
        return uuidString
    }

    /// A stable order, for sorting.
    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool { lhs.uuidString < rhs.uuidString }
}

extension String {
    /// Four upper-case hex digits.
    init(format16 value: UInt16) {
        let digits = String(value, radix: 16, uppercase: true)
        self = String(repeating: "0", count: Swift.max(0, 4 - digits.count)) + digits
    }
}
