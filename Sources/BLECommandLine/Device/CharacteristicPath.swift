import BLE

/// How a characteristic is named on the command line: `2A37`, a 128-bit UUID, a SIG name
/// (`"Battery Level"`, `battery-level`), each optionally preceded by its service and a slash
/// (`180D/2A37`, `heart-rate/body-sensor-location`).
public struct CharacteristicPath: Sendable, Equatable {
    /// One part: a UUID, or a SIG name in any case, with spaces, dashes or underscores.
    public enum Part: Sendable, Equatable, CustomStringConvertible {
        /// A UUID in any of its forms.
        case uuid(BluetoothUUID)
        /// A SIG name, lower-cased, letters and digits only (`heartratemeasurement`).
        case name(String)

        init(_ text: String) {
            if let uuid = BluetoothUUID(validating: text) {
                self = .uuid(uuid)
            } else {
                self = .name(Self.normalized(text))
            }
        }

        func matches(_ uuid: BluetoothUUID) -> Bool {
            switch self {
            case .uuid(let wanted): wanted == uuid
            case .name(let wanted): uuid.name.map(Self.normalized) == wanted
            }
        }

        static func normalized(_ name: String) -> String {
            String(name.lowercased().filter { $0.isLetter || $0.isNumber })
        }

        /// As written, for messages.
        public var description: String {
            switch self {
            case .uuid(let uuid): uuid.description
            case .name(let name): name
            }
        }
    }

    /// The service, when given.
    public var service: Part?
    /// The characteristic.
    public var characteristic: Part

    /// Parses `SERVICE/CHARACTERISTIC` or `CHARACTERISTIC`.
    public init(_ text: String) throws(UsageError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty }) else {
            throw UsageError("\"\(text)\" is not a characteristic (write 2A37, or 180D/2A37 with its service)")
        }
        service = parts.count == 2 ? Part(parts[0]) : nil
        characteristic = Part(parts[parts.count - 1])
    }

    /// The one characteristic this path names among `services`.
    func find(in services: [Service], written text: String) throws -> Characteristic {
        let candidates = services.filter { service?.matches($0.uuid) ?? true }.flatMap { service in
            service.characteristics.filter { characteristic.matches($0.uuid) }
        }
        guard let first = candidates.first else {
            throw BLEError(.notFound, message: "the device has no characteristic \(text) (see `ble explore`)")
        }
        if candidates.count > 1 && service == nil {
            let choices = candidates.map { "\($0.serviceUUID)/\($0.uuid)" }
            let unique = Array(Set(choices)).sorted()
            if unique.count > 1 {
                throw UsageError("\(text) is in several services; name one: \(unique.joined(separator: ", "))")
            }
        }
        return first
    }
}
