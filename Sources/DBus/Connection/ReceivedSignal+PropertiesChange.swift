import CDBus
import Foundation

/// What a `Properties.PropertiesChanged(s, a{sv}, as)` says, told apart in one reading.
public enum ReceivedPropertiesChange {
    /// Exactly the asked property of the asked interface changed, to a byte array, and nothing
    /// was invalidated: the bytes (a characteristic's notification or read echo).
    case loneBytes(Data)
    /// Any other change: the interface, the changed properties (each value taken out of its
    /// variant) and the invalidated names, as ``ReceivedSignal/propertiesChanged(known:)``
    /// decodes them.
    case changed(interface: InterfaceName, changed: [String: DBusValue], invalidated: [String])
}

extension ReceivedSignal {
    /// For a `PropertiesChanged(s, a{sv}, as)`: ``ReceivedPropertiesChange/loneBytes(_:)`` when it is
    /// what ``changedBytes(interface:property:)`` takes, else the change as
    /// ``propertiesChanged(known:)`` decodes it. `nil` for any other body.
    ///
    /// The signature is checked once for both readings, and only a change that is not a value
    /// (a device's, an advertiser's) is copied out of libdbus to be decoded.
    public func propertiesChange(
        loneBytesOf interface: InterfaceName, property: String, known: [InterfaceName] = []
    ) -> ReceivedPropertiesChange? {
        guard let signature = dbus_message_get_signature(raw), strcmp(signature, "sa{sv}as") == 0 else { return nil }
        if let bytes = changedBytesOfCheckedBody(interface: interface, property: property) { return .loneBytes(bytes) }
        return propertiesChangedOfCheckedBody(known: known).map {
            .changed(interface: $0.interface, changed: $0.changed, invalidated: $0.invalidated)
        }
    }
}
