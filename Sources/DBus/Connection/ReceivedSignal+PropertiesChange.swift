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
    /// The message is copied out of libdbus once for both readings: asking the two questions
    /// one after the other copied every change that is not a value (a device's every change
    /// while it connects, an advertiser's) twice, and that copy is most of a small signal's
    /// decoding.
    public func propertiesChange(
        loneBytesOf interface: InterfaceName, property: String, known: [InterfaceName] = []
    ) -> ReceivedPropertiesChange? {
        guard let signature = dbus_message_get_signature(raw), strcmp(signature, "sa{sv}as") == 0 else { return nil }
        let read = WireDecoder.withBody(of: raw) { decoder, _ -> ReceivedPropertiesChange? in
            let start = decoder.position
            if let bytes = decoder.changedBytes(interface: interface.rawValue, property: property) {
                return .loneBytes(bytes)
            }
            decoder.position = start
            return decoder.propertiesChanged(known: known).map {
                .changed(interface: $0.interface, changed: $0.changed, invalidated: $0.invalidated)
            }
        }
        if let read { return read }
        return propertiesChangedThroughIterators(known: known).map {
            .changed(interface: $0.interface, changed: $0.changed, invalidated: $0.invalidated)
        }
    }
}
