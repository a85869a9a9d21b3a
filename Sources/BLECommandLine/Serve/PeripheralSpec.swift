import BLE
import Foundation

/// A peripheral for `ble serve` to run, read from JSON: what it advertises and the GATT services
/// it serves. The format is documented in `Examples/serve/README.md`; unknown keys are errors,
/// so a misspelt key never silently keeps a default.
///
/// ```json
/// {
///   "name": "swift-ble heart rate",
///   "advertise": { "services": ["180D"], "manufacturerData": { "0xFFFF": { "hex": "0102" } } },
///   "services": [
///     { "uuid": "180D", "characteristics": [
///       { "uuid": "2A37", "properties": ["notify"], "value": { "hex": "0048" },
///         "notify": { "intervalMs": 1000, "values": [{ "hex": "0048" }, { "hex": "004a" }] } },
///       { "uuid": "2A38", "properties": ["read"], "value": { "uint8": 1 },
///         "descriptors": [{ "uuid": "2901", "value": { "utf8": "sensor location" } }] }
///     ] }
///   ]
/// }
/// ```
public struct PeripheralSpec: Sendable, Equatable {
    /// The advertised local name.
    public var name: String?
    /// The advertisement.
    public var advertisement: AdvertisementSpec
    /// The GATT services, in order.
    public var services: [ServiceSpec]

    /// Parses and checks a spec; errors name the offending key, e.g.
    /// `services[0].characteristics[1].properties[0]: unknown property "reed"`.
    public init(json: Data) throws(SpecError) {
        do {
            self = try JSONDecoder().decode(PeripheralSpec.self, from: json)
        } catch let error as SpecError {
            throw error
        } catch let error as DecodingError {
            throw SpecError(error)
        } catch {
            throw SpecError(path: "", message: "not JSON: \(error.localizedDescription)")
        }
    }
}

/// What the peripheral advertises.
public struct AdvertisementSpec: Sendable, Equatable {
    /// Service UUIDs in the advertisement (default: the primary services).
    public var services: [BluetoothUUID]
    /// Manufacturer data by company identifier.
    public var manufacturerData: [UInt16: Data] = [:]
    /// Service data by service UUID.
    public var serviceData: [BluetoothUUID: Data] = [:]
    /// The GAP appearance.
    public var appearance: UInt16?
    /// Whether to include the TX power.
    public var includeTxPower = false
}

/// A GATT service to serve.
public struct ServiceSpec: Sendable, Equatable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// Primary (default) or secondary.
    public var primary = true
    /// Its characteristics, in order.
    public var characteristics: [CharacteristicSpec]
}

/// A characteristic to serve.
public struct CharacteristicSpec: Sendable, Equatable {
    /// Its UUID.
    public var uuid: BluetoothUUID
    /// What centrals may do with it.
    public var properties: [SpecProperty]
    /// The initial value (empty when not given).
    public var value = Data()
    /// Values to notify or indicate in turn while a central is subscribed.
    public var notify: NotifySpec?
    /// Whether writes are kept as the new value (`"store"`, the default) or refused (`"reject"`).
    public var onWrite: WriteBehavior = .store
    /// Its descriptors (the CCC 0x2902 is added by BlueZ for notify and indicate).
    public var descriptors: [DescriptorSpec] = []
}

/// A property of a served characteristic, in BlueZ's spelling.
public enum SpecProperty: String, Sendable, Equatable, CaseIterable {
    /// Centrals may read it.
    case read
    /// Centrals may write it with a request.
    case write
    /// It notifies subscribers.
    case notify
    /// It indicates (notifications that subscribers confirm).
    case indicate
    /// Its value may be broadcast.
    case broadcast
    /// Centrals may write it with a command.
    case writeWithoutResponse = "write-without-response"
    /// Centrals may write it reliably (prepared, verified).
    case reliableWrite = "reliable-write"
    /// Reads need an encrypted link.
    case encryptRead = "encrypt-read"
    /// Writes need an encrypted link.
    case encryptWrite = "encrypt-write"
    /// Reads need an authenticated link.
    case encryptAuthenticatedRead = "encrypt-authenticated-read"
    /// Writes need an authenticated link.
    case encryptAuthenticatedWrite = "encrypt-authenticated-write"
}

/// What happens to a write.
public enum WriteBehavior: String, Sendable, Equatable {
    /// The written value becomes the value.
    case store
    /// Refused with "write not permitted".
    case reject
}

/// Periodic notifications.
public struct NotifySpec: Sendable, Equatable {
    /// Milliseconds between values (at least 10).
    public var intervalMs: Int
    /// The values, in turn; the current value when empty.
    public var values: [Data] = []
}

/// A descriptor to serve.
public struct DescriptorSpec: Sendable, Equatable {
    /// Its UUID (not 2902, which BlueZ manages).
    public var uuid: BluetoothUUID
    /// Its value.
    public var value = Data()
    /// Whether centrals may write it.
    public var writable = false
}

/// A spec that cannot be served, with where in the JSON the problem is.
public struct SpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key path, e.g. `services[0].characteristics[1].uuid` (empty for the top level).
    public var path: String
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `services[0].uuid: "xyz" is not a UUID`
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
