import DBus

/// A decoded `org.bluez.Device1.Disconnected(s name, s message)` signal (BlueZ ≥5.83).
///
/// bluetoothd emits it just before `Connected=false`; older versions only change the property.
public struct DeviceDisconnectedSignal: Sendable, Hashable {
    /// The device whose link went down.
    public var device: ObjectPath
    /// The reason name as sent, e.g. `org.bluez.Reason.Remote`, kept even when unknown.
    public var reasonName: String
    /// The human-readable message as sent.
    public var reasonMessage: String

    /// The reason, or `nil` when a newer BlueZ sent a name this module does not know.
    public var reason: DisconnectReason? { DisconnectReason(name: reasonName) }

    /// Creates a signal value from its parts.
    public init(device: ObjectPath, reasonName: String, reasonMessage: String) {
        self.device = device
        self.reasonName = reasonName
        self.reasonMessage = reasonMessage
    }

    /// Creates the signal bluetoothd sends for `reason`, with its standard message.
    public init(device: ObjectPath, reason: DisconnectReason) {
        self.init(device: device, reasonName: reason.name, reasonMessage: reason.message)
    }

    /// Decodes `message` if it is a `Device1.Disconnected` signal; `nil` for any other message.
    ///
    /// - Throws: ``DBus/DBusError`` with code `.typeMismatch` when the body is not `ss` or
    ///   the signal has no path.
    public init?(signal message: DBusMessage) throws(DBusError) {
        guard message.kind == .signal, message.interface == BlueZInterface.device1,
            message.member == BlueZSignal.disconnected
        else { return nil }
        guard let path = message.path else {
            throw DBusError(.typeMismatch, message: "org.bluez.Device1.Disconnected: the signal has no path")
        }
        guard message.body.count == 2, case .string(let name) = message.body[0],
            case .string(let text) = message.body[1]
        else {
            throw DBusError(
                .typeMismatch,
                message: "org.bluez.Device1.Disconnected: expected body ss, got \(message.signature)")
        }
        self.init(device: path, reasonName: name, reasonMessage: text)
    }

    /// The signal as a message, ready for `Connection.send(_:)`.
    public var signalMessage: DBusMessage {
        DBusMessage(
            kind: .signal, path: device, interface: BlueZInterface.device1, member: BlueZSignal.disconnected,
            body: [.string(reasonName), .string(reasonMessage)])
    }
}
