import BLE
import Foundation

/// A device's GATT tree as one JSON object (`ble explore --json`): services, characteristics
/// with their properties, descriptors, and each readable value (hex) or why it could not be read.
struct ExploreRecord: JSONLineRecord {
    struct Attribute: Encodable {
        var uuid: String
        var name: String?
        /// The bytes in hex, when read.
        var value: String?
        /// Why the read failed (`notPermitted: …`), when it did.
        var error: String?

        init(_ uuid: BluetoothUUID, outcome: ReadOutcome?) {
            self.uuid = uuid.description
            name = uuid.name
            switch outcome {
            case .value(let data): value = ValueFormat.hex(data).replacingOccurrences(of: " ", with: "")
            case .refused(let refusal): error = "\(refusal.code): \(refusal.message)"
            case nil: break
            }
        }
    }

    struct CharacteristicRecord: Encodable {
        var uuid: String
        var name: String?
        var value: String?
        var error: String?
        var properties: [String]
        var descriptors: [Attribute]

        init(_ attribute: Attribute, properties: [String], descriptors: [Attribute]) {
            uuid = attribute.uuid
            name = attribute.name
            value = attribute.value
            error = attribute.error
            self.properties = properties
            self.descriptors = descriptors
        }
    }

    struct ServiceRecord: Encodable {
        var uuid: String
        var name: String?
        var primary: Bool
        var characteristics: [CharacteristicRecord]
    }

    var address: String
    var name: String?
    var services: [ServiceRecord]
}

/// What reading one value came to, in `ble explore`: the bytes, or the refusal (shown, not
/// fatal). A lost link, the bus going or Ctrl-C end the command instead.
enum ReadOutcome {
    case value(Data)
    case refused(BLEError)

    static func of(_ read: () async throws(BLEError) -> Data) async throws(BLEError) -> ReadOutcome {
        do {
            return .value(try await read())
        } catch  where [.disconnected, .notConnected, .cancelled, .bluetoothUnavailable].contains(error.code) {
            throw error
        } catch {
            return .refused(error)
        }
    }
}
