/// The `Flags` of a GATT descriptor an application registers (bluez-dbus-api.md §5.3).
///
/// Remote descriptors have no `Flags` property. Strings convert both ways with ``parse(_:)``
/// and ``strings``; unknown strings are returned separately so callers keep them.
public struct GattDescriptorFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// One bit per flag, in the order of ``allNames``.
    public let rawValue: UInt32

    /// Wraps bits; bits beyond the known flags are kept but have no name.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// `read`
    public static let read = Self(rawValue: 1 << 0)
    /// `write`
    public static let write = Self(rawValue: 1 << 1)
    /// `encrypt-read`
    public static let encryptRead = Self(rawValue: 1 << 2)
    /// `encrypt-write`
    public static let encryptWrite = Self(rawValue: 1 << 3)
    /// `encrypt-authenticated-read`
    public static let encryptAuthenticatedRead = Self(rawValue: 1 << 4)
    /// `encrypt-authenticated-write`
    public static let encryptAuthenticatedWrite = Self(rawValue: 1 << 5)
    /// `secure-read`
    public static let secureRead = Self(rawValue: 1 << 6)
    /// `secure-write`
    public static let secureWrite = Self(rawValue: 1 << 7)
    /// `authorize`
    public static let authorize = Self(rawValue: 1 << 8)

    /// The flag strings in bluetoothd's order; bit `n` of ``rawValue`` is `allNames[n]`.
    public static let allNames = [
        "read", "write", "encrypt-read", "encrypt-write", "encrypt-authenticated-read",
        "encrypt-authenticated-write", "secure-read", "secure-write", "authorize",
    ]

    /// The flag named `string`, or `nil` when the string is not a known descriptor flag.
    public init?(string: String) {
        guard let bit = FlagNames.bit(of: string, in: Self.allNames) else { return nil }
        self.init(rawValue: 1 << bit)
    }

    /// The known flags among `strings`, and the other strings in their original order.
    public static func parse(_ strings: [String]) -> (flags: Self, unknown: [String]) {
        let (bits, unknown) = FlagNames.parse(strings, names: allNames)
        return (Self(rawValue: bits), unknown)
    }

    /// The flag strings, in bluetoothd's order.
    public var strings: [String] { FlagNames.strings(of: rawValue, names: Self.allNames) }

    /// The flag strings joined by ", ".
    public var description: String { strings.joined(separator: ", ") }
}
