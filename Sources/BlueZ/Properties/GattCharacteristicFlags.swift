/// The `Flags` of a GATT characteristic (bluez-dbus-api.md §4.3, §5.3).
///
/// Remote characteristics only ever carry ``remoteFlags``; the security and authorization
/// flags exist for characteristics an application registers. Strings convert both ways with
/// ``parse(_:)`` and ``strings``; strings this type does not know are returned separately so
/// callers keep them (``GattCharacteristicProperties/unknownFlags``).
public struct GattCharacteristicFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// One bit per flag, in the order of ``allNames``.
    public let rawValue: UInt32

    /// Wraps bits; bits beyond the known flags are kept but have no name.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// `broadcast`
    public static let broadcast = Self(rawValue: 1 << 0)
    /// `read`
    public static let read = Self(rawValue: 1 << 1)
    /// `write-without-response`
    public static let writeWithoutResponse = Self(rawValue: 1 << 2)
    /// `write`
    public static let write = Self(rawValue: 1 << 3)
    /// `notify`
    public static let notify = Self(rawValue: 1 << 4)
    /// `indicate`
    public static let indicate = Self(rawValue: 1 << 5)
    /// `authenticated-signed-writes`
    public static let authenticatedSignedWrites = Self(rawValue: 1 << 6)
    /// `extended-properties`
    public static let extendedProperties = Self(rawValue: 1 << 7)
    /// `reliable-write`
    public static let reliableWrite = Self(rawValue: 1 << 8)
    /// `writable-auxiliaries`
    public static let writableAuxiliaries = Self(rawValue: 1 << 9)
    /// `encrypt-read` (server only)
    public static let encryptRead = Self(rawValue: 1 << 10)
    /// `encrypt-write` (server only)
    public static let encryptWrite = Self(rawValue: 1 << 11)
    /// `encrypt-authenticated-read` (server only)
    public static let encryptAuthenticatedRead = Self(rawValue: 1 << 12)
    /// `encrypt-authenticated-write` (server only)
    public static let encryptAuthenticatedWrite = Self(rawValue: 1 << 13)
    /// `secure-read` (server only)
    public static let secureRead = Self(rawValue: 1 << 14)
    /// `secure-write` (server only)
    public static let secureWrite = Self(rawValue: 1 << 15)
    /// `authorize` (server only)
    public static let authorize = Self(rawValue: 1 << 16)
    /// `encrypt-notify` (server only)
    public static let encryptNotify = Self(rawValue: 1 << 17)
    /// `encrypt-authenticated-notify` (server only)
    public static let encryptAuthenticatedNotify = Self(rawValue: 1 << 18)
    /// `secure-notify` (server only)
    public static let secureNotify = Self(rawValue: 1 << 19)
    /// `encrypt-indicate` (server only)
    public static let encryptIndicate = Self(rawValue: 1 << 20)
    /// `encrypt-authenticated-indicate` (server only)
    public static let encryptAuthenticatedIndicate = Self(rawValue: 1 << 21)
    /// `secure-indicate` (server only)
    public static let secureIndicate = Self(rawValue: 1 << 22)

    /// The flags a remote characteristic can have (`chrc_props`/`chrc_ext_props`).
    public static let remoteFlags: Self = [
        .broadcast, .read, .writeWithoutResponse, .write, .notify, .indicate, .authenticatedSignedWrites,
        .extendedProperties, .reliableWrite, .writableAuxiliaries,
    ]

    /// Every flag bluetoothd accepts when an application registers a characteristic.
    public static let serverFlags = Self(rawValue: (1 << 23) - 1)

    /// The flag strings in bluetoothd's order; bit `n` of ``rawValue`` is `allNames[n]`.
    public static let allNames = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
        "encrypt-read", "encrypt-write", "encrypt-authenticated-read", "encrypt-authenticated-write",
        "secure-read", "secure-write", "authorize", "encrypt-notify", "encrypt-authenticated-notify",
        "secure-notify", "encrypt-indicate", "encrypt-authenticated-indicate", "secure-indicate",
    ]

    /// The flag named `string`, or `nil` when the string is not a known flag.
    public init?(string: String) {
        guard let bit = FlagNames.bit(of: string, in: Self.allNames) else { return nil }
        self.init(rawValue: 1 << bit)
    }

    /// The known flags among `strings`, and the strings that name no known flag in their
    /// original order (duplicates kept), so nothing a newer BlueZ sends is lost.
    public static func parse(_ strings: [String]) -> (flags: Self, unknown: [String]) {
        let (bits, unknown) = FlagNames.parse(strings, names: allNames)
        return (Self(rawValue: bits), unknown)
    }

    /// The flag strings, in bluetoothd's order (the order it reports them in).
    public var strings: [String] { FlagNames.strings(of: rawValue, names: Self.allNames) }

    /// The flag strings joined by ", ".
    public var description: String { strings.joined(separator: ", ") }
}

/// Converts flag bit sets to and from their strings.
enum FlagNames {
    /// The bit index of `string` in `names`.
    static func bit(of string: String, in names: [String]) -> Int? {
        names.firstIndex(of: string)
    }

    /// The bits of the known `strings` and the unknown strings in order.
    static func parse(_ strings: [String], names: [String]) -> (bits: UInt32, unknown: [String]) {
        var bits: UInt32 = 0
        var unknown: [String] = []
        for string in strings {
            if let bit = bit(of: string, in: names) {
                bits |= 1 << UInt32(bit)
            } else {
                unknown.append(string)
            }
        }
        return (bits, unknown)
    }

    /// The names of the set bits, in bit order.
    static func strings(of bits: UInt32, names: [String]) -> [String] {
        names.indices.filter { bits & (1 << UInt32($0)) != 0 }.map { names[$0] }
    }
}
