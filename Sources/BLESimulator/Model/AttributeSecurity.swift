/// The security a peer demands before it serves an attribute, and the security a link has.
///
/// Scenarios ask for it with the server-side flag strings of BlueZ (`encrypt-read`,
/// `encrypt-authenticated-write`, `secure-read`, …): they describe the peer's permissions and
/// never appear in a remote characteristic's `Flags`.
enum AttributeSecurity: Int, Sendable, Comparable {
    case none = 0
    /// An encrypted link: Just Works pairing is enough (ATT 0x0F when missing).
    case encrypted = 1
    /// An encrypted link with an authenticated (MITM-protected) key (ATT 0x05 when missing).
    case authenticated = 2

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The ATT error a peer answers when the link has less than `self`.
    var missingError: UInt8 { self == .authenticated ? 0x05 : 0x0F }

    /// Reading or writing an attribute.
    enum Access {
        case read, write
    }

    /// What `flags` demand for `access`. One pass with literal cases: it runs on every GATT
    /// call, where arrays of flag names would be allocated each time.
    static func required(by flags: [String], for access: Access) -> AttributeSecurity {
        var needed = AttributeSecurity.none
        for flag in flags {
            switch (access, flag) {
            case (.read, "encrypt-authenticated-read"), (.read, "secure-read"),
                (.write, "encrypt-authenticated-write"), (.write, "secure-write"):
                return .authenticated
            case (.read, "encrypt-read"), (.write, "encrypt-write"): needed = .encrypted
            default: continue
            }
        }
        return needed
    }

    /// The flags a remote characteristic can show: its properties and extended properties
    /// (`chrc_props`, `chrc_ext_props`), in that order.
    static let remoteFlags: [String] = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
    ]
}
