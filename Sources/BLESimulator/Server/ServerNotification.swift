import DBus
import Foundation

/// One notification or indication a registered application sent to one subscribed remote
/// central, as ``Simulator/notifications(for:)`` reports it.
public struct ServerNotification: Sendable, Hashable {
    /// Notification (unconfirmed) or indication (confirmed by the central).
    public enum Kind: Sendable, Hashable {
        /// A Handle Value Notification.
        case notification
        /// A Handle Value Indication; the simulated central confirms it at once.
        case indication
    }

    /// The characteristic's UUID, 128-bit lower case.
    public var characteristic: String
    /// The characteristic object's path in the application.
    public var path: ObjectPath
    /// The address of the remote central it went to.
    public var central: String
    /// The payload, at most 512 bytes (bluetoothd truncates longer values).
    public var value: Data
    /// Notification or indication, from what the central wrote to the CCC descriptor.
    public var kind: Kind
    /// Whether it came through an `AcquireNotify` socket rather than `PropertiesChanged(Value)`.
    public var viaAcquiredSocket: Bool
}

/// How a remote central writes a characteristic value.
public enum RemoteWriteType: Sendable, Hashable {
    /// ATT Write Request: the central waits for the response (the application's reply).
    case request
    /// ATT Write Command: no response; bluetoothd forwards it without waiting for the application.
    case command
}
