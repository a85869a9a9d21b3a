/// The reasons of `Device1.Disconnected(s name, s message)` (BlueZ ≥5.83, bluez-dbus-api.md
/// §3.1), with the exact name and message bluetoothd sends for each.
public enum DisconnectReason: String, Sendable, Hashable, CaseIterable {
    /// `org.bluez.Reason.Unknown`: "Unspecified".
    case unknown = "org.bluez.Reason.Unknown"
    /// `org.bluez.Reason.Timeout`: "Connection timeout" (supervision timeout, link loss).
    case timeout = "org.bluez.Reason.Timeout"
    /// `org.bluez.Reason.Local`: "Connection terminated by local host".
    case local = "org.bluez.Reason.Local"
    /// `org.bluez.Reason.Remote`: "Connection terminated by remote user".
    case remote = "org.bluez.Reason.Remote"
    /// `org.bluez.Reason.Authentication`: "Connection terminated due to authentication failure".
    case authentication = "org.bluez.Reason.Authentication"
    /// `org.bluez.Reason.Suspend`: "Connection terminated by local host for suspend".
    case suspend = "org.bluez.Reason.Suspend"

    /// The reason name as sent in the signal's first argument, e.g. `org.bluez.Reason.Remote`.
    public var name: String { rawValue }

    /// The message bluetoothd sends with this reason in the signal's second argument.
    public var message: String {
        switch self {
        case .unknown: "Unspecified"
        case .timeout: "Connection timeout"
        case .local: "Connection terminated by local host"
        case .remote: "Connection terminated by remote user"
        case .authentication: "Connection terminated due to authentication failure"
        case .suspend: "Connection terminated by local host for suspend"
        }
    }

    /// The reason called `name`, or `nil` for a name this module does not know.
    public init?(name: String) {
        self.init(rawValue: name)
    }
}
