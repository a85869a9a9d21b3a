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
        guard hasSignature("sa{sv}as") else { return nil }
        if let bytes = changedBytesOfCheckedBody(interface: interface, property: property) { return .loneBytes(bytes) }
        return propertiesChangedOfCheckedBody(known: known).map {
            .changed(interface: $0.interface, changed: $0.changed, invalidated: $0.invalidated)
        }
    }
}

extension ReceivedSignal {
    /// For the fuzz harness: whether, for the message `bytes` hold, the value reading
    /// (``changedBytes(interface:property:)`` and ``propertiesChange(loneBytesOf:property:known:)``
    /// with its interface and `Value`) agrees with the whole decoding (``propertiesChanged(known:)``):
    /// bytes only where that finds one `Value` of the same bytes and nothing invalidated, and
    /// any other change as that decodes it. (Not the converse: a dictionary that repeats
    /// `Value` decodes to one entry, and is no lone value.) `nil` when libdbus does not take
    /// the message.
    static func valueReadingAgrees(onWire bytes: [UInt8]) -> Bool? {
        WireDecoder.withDemarshalled(bytes) { raw in
            let signal = ReceivedSignal(raw: raw)
            let whole = signal.propertiesChanged()
            let interface = whole?.interface ?? .properties
            var expected: Data?
            if let whole, whole.invalidated.isEmpty, whole.changed.count == 1,
                case .bytes(let value)? = whole.changed["Value"]
            {
                expected = value
            }
            let read = signal.changedBytes(interface: interface, property: "Value")
            switch signal.propertiesChange(loneBytesOf: interface, property: "Value") {
            case .loneBytes(let value):
                return read == value && expected == value
            case .changed(let name, let changed, let invalidated):
                guard let whole, read == nil else { return false }
                // Values compared as text: NaN is not == NaN.
                return name == whole.interface && invalidated == whole.invalidated
                    && changed.count == whole.changed.count
                    && changed.allSatisfy { key, value in whole.changed[key].map { "\($0)" } == "\(value)" }
            case nil:
                return read == nil && whole == nil
            }
        }
    }
}
