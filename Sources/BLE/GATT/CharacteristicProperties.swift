import BlueZ

/// What a characteristic supports, as Core Bluetooth's `CBCharacteristicProperties`, plus
/// BlueZ's extended flags.
public struct CharacteristicProperties: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The raw value.
    public let rawValue: UInt32
    /// Creates properties from their bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Value can be broadcast.
    public static let broadcast = CharacteristicProperties(rawValue: 1 << 0)
    /// Readable.
    public static let read = CharacteristicProperties(rawValue: 1 << 1)
    /// Writable without response.
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 1 << 2)
    /// Writable with response.
    public static let write = CharacteristicProperties(rawValue: 1 << 3)
    /// Notifies.
    public static let notify = CharacteristicProperties(rawValue: 1 << 4)
    /// Indicates (notifications the central confirms).
    public static let indicate = CharacteristicProperties(rawValue: 1 << 5)
    /// Signed writes.
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 1 << 6)
    /// Has extended properties.
    public static let extendedProperties = CharacteristicProperties(rawValue: 1 << 7)
    /// Supports reliable (queued, verified) writes.
    public static let reliableWrite = CharacteristicProperties(rawValue: 1 << 8)
    /// Its descriptors are writable.
    public static let writableAuxiliaries = CharacteristicProperties(rawValue: 1 << 9)
    /// Reads need encryption.
    public static let encryptRead = CharacteristicProperties(rawValue: 1 << 10)
    /// Writes need encryption.
    public static let encryptWrite = CharacteristicProperties(rawValue: 1 << 11)
    /// Reads need an authenticated (MITM-protected) link.
    public static let encryptAuthenticatedRead = CharacteristicProperties(rawValue: 1 << 12)
    /// Writes need an authenticated link.
    public static let encryptAuthenticatedWrite = CharacteristicProperties(rawValue: 1 << 13)

    static let byFlag: [(String, CharacteristicProperties)] = [
        ("broadcast", .broadcast), ("read", .read), ("write-without-response", .writeWithoutResponse),
        ("write", .write), ("notify", .notify), ("indicate", .indicate),
        ("authenticated-signed-writes", .authenticatedSignedWrites), ("extended-properties", .extendedProperties),
        ("reliable-write", .reliableWrite), ("writable-auxiliaries", .writableAuxiliaries),
        ("encrypt-read", .encryptRead), ("encrypt-write", .encryptWrite),
        ("encrypt-authenticated-read", .encryptAuthenticatedRead),
        ("encrypt-authenticated-write", .encryptAuthenticatedWrite),
    ]

    /// From BlueZ's `Flags` strings; unknown strings are ignored here (BlueZ adds flags).
    init(flags: [String]) {
        var value: CharacteristicProperties = []
        for flag in flags { if let match = Self.byFlag.first(where: { $0.0 == flag }) { value.insert(match.1) } }
        self = value
    }

    /// A short, human-readable form.
    public var description: String {
        Self.byFlag.filter { contains($0.1) }.map(\.0).joined(separator: ",")
    }
}

/// How to write a characteristic.
public enum WriteType: Sendable, Hashable {
    /// Write request: the peripheral acknowledges; long values use a long write.
    case withResponse
    /// Write command: no acknowledgement, at most ``Peripheral/maximumWriteLength(for:)`` bytes.
    case withoutResponse
    /// Reliable (prepared, verified) write, where the characteristic supports it.
    case reliable

    var blueZType: String {
        switch self {
        case .withResponse: "request"
        case .withoutResponse: "command"
        case .reliable: "reliable"
        }
    }
}
