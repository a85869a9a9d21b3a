/// Who may read and write a published attribute, as Core Bluetooth's `CBAttributePermissions`,
/// with BlueZ's authenticated and Secure Connections levels.
public struct AttributePermissions: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt16
    /// Creates permissions from their bits.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Readable on any link.
    public static let readable = AttributePermissions(rawValue: 1 << 0)
    /// Writable on any link.
    public static let writeable = AttributePermissions(rawValue: 1 << 1)
    /// Readable on an encrypted link only (BlueZ `encrypt-read`).
    public static let readEncryptionRequired = AttributePermissions(rawValue: 1 << 2)
    /// Writable on an encrypted link only (`encrypt-write`).
    public static let writeEncryptionRequired = AttributePermissions(rawValue: 1 << 3)
    /// Readable on an authenticated (MITM-protected) link only (`encrypt-authenticated-read`).
    public static let readAuthenticationRequired = AttributePermissions(rawValue: 1 << 4)
    /// Writable on an authenticated link only (`encrypt-authenticated-write`).
    public static let writeAuthenticationRequired = AttributePermissions(rawValue: 1 << 5)
    /// Readable over LE Secure Connections only (`secure-read`).
    public static let readSecureConnectionsRequired = AttributePermissions(rawValue: 1 << 6)
    /// Writable over LE Secure Connections only (`secure-write`).
    public static let writeSecureConnectionsRequired = AttributePermissions(rawValue: 1 << 7)
    /// The application authorizes each access (`authorize`): prepared writes reach it with
    /// ``WriteRequestType/reliable`` for authorization.
    public static let authorizationRequired = AttributePermissions(rawValue: 1 << 8)

    /// Readable and writable on any link: the default.
    public static let readWrite: AttributePermissions = [.readable, .writeable]

    /// The BlueZ flag for reading: the strongest level asked for.
    var readFlag: String {
        if contains(.readSecureConnectionsRequired) { return "secure-read" }
        if contains(.readAuthenticationRequired) { return "encrypt-authenticated-read" }
        if contains(.readEncryptionRequired) { return "encrypt-read" }
        return "read"
    }

    /// The BlueZ flag for writing: the strongest level asked for.
    var writeFlag: String {
        if contains(.writeSecureConnectionsRequired) { return "secure-write" }
        if contains(.writeAuthenticationRequired) { return "encrypt-authenticated-write" }
        if contains(.writeEncryptionRequired) { return "encrypt-write" }
        return "write"
    }

    /// Any read permission.
    var allowsRead: Bool {
        !isDisjoint(with: [
            .readable, .readEncryptionRequired, .readAuthenticationRequired, .readSecureConnectionsRequired,
        ])
    }

    /// Any write permission.
    var allowsWrite: Bool {
        !isDisjoint(with: [
            .writeable, .writeEncryptionRequired, .writeAuthenticationRequired, .writeSecureConnectionsRequired,
        ])
    }
}
