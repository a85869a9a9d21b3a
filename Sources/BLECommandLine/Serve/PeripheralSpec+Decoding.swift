import BLE
import Foundation

// Decoding with the checks that make a spec servable; every error carries its key path.

extension PeripheralSpec: Decodable {
    private enum Keys: String, CodingKey, CaseIterable { case name, advertise, services }

    /// Decodes and checks a spec.
    public init(from decoder: any Decoder) throws {
        let c = try SpecKeys.container(decoder, Keys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        if let name, name.utf8.count > 248 || name.isEmpty {
            throw SpecError(path: "name", message: "a name has 1 to 248 bytes of UTF-8")
        }
        services = try c.decodeIfPresent([ServiceSpec].self, forKey: .services) ?? []
        if services.isEmpty { throw SpecError(path: "services", message: "at least one service is needed") }
        let primaries = services.filter(\.primary).map(\.uuid)
        advertisement =
            try c.decodeIfPresent(AdvertisementSpec.self, forKey: .advertise)
            ?? AdvertisementSpec(services: primaries)
    }
}

extension AdvertisementSpec: Decodable {
    private enum Keys: String, CodingKey, CaseIterable {
        case services, manufacturerData, serviceData, appearance, includeTxPower
    }

    /// Decodes an advertisement; `services` defaults to none when the object is given.
    public init(from decoder: any Decoder) throws {
        let c = try SpecKeys.container(decoder, Keys.self)
        services = try c.decodeIfPresent([SpecUUID].self, forKey: .services)?.map(\.uuid) ?? []
        let manufacturer = try c.decodeIfPresent([String: SpecValue].self, forKey: .manufacturerData) ?? [:]
        for (key, value) in manufacturer {
            let digits = key.lowercased().hasPrefix("0x") ? String(key.dropFirst(2)) : key
            guard let company = key.lowercased().hasPrefix("0x") ? UInt16(digits, radix: 16) : UInt16(digits) else {
                throw SpecError(
                    path: SpecKeys.path(c.codingPath + [Keys.manufacturerData]),
                    message: "\"\(key)\" is not a company identifier (0x0000 to 0xFFFF)")
            }
            manufacturerData[company] = value.data
        }
        let data = try c.decodeIfPresent([String: SpecValue].self, forKey: .serviceData) ?? [:]
        for (key, value) in data {
            guard let uuid = BluetoothUUID(validating: key) else {
                throw SpecError(
                    path: SpecKeys.path(c.codingPath + [Keys.serviceData]), message: "\"\(key)\" is not a UUID")
            }
            serviceData[uuid] = value.data
        }
        appearance = try c.decodeIfPresent(UInt16.self, forKey: .appearance)
        includeTxPower = try c.decodeIfPresent(Bool.self, forKey: .includeTxPower) ?? false
    }
}

extension ServiceSpec: Decodable {
    private enum Keys: String, CodingKey, CaseIterable { case uuid, primary, characteristics }

    /// Decodes a service; it needs at least one characteristic.
    public init(from decoder: any Decoder) throws {
        let c = try SpecKeys.container(decoder, Keys.self)
        uuid = try c.decode(SpecUUID.self, forKey: .uuid).uuid
        primary = try c.decodeIfPresent(Bool.self, forKey: .primary) ?? true
        characteristics = try c.decodeIfPresent([CharacteristicSpec].self, forKey: .characteristics) ?? []
        if characteristics.isEmpty {
            throw SpecError(
                path: SpecKeys.path(c.codingPath + [Keys.characteristics]),
                message: "a service needs at least one characteristic")
        }
    }
}

extension CharacteristicSpec: Decodable {
    private enum Keys: String, CodingKey, CaseIterable { case uuid, properties, value, notify, onWrite, descriptors }

    /// Decodes a characteristic and checks that its parts agree with its properties.
    public init(from decoder: any Decoder) throws {
        let c = try SpecKeys.container(decoder, Keys.self)
        uuid = try c.decode(SpecUUID.self, forKey: .uuid).uuid
        let names = try c.decode([String].self, forKey: .properties)
        properties = try names.enumerated().map { index, name in
            guard let property = SpecProperty(rawValue: name) else {
                throw SpecError(
                    path: SpecKeys.path(c.codingPath + [Keys.properties]) + "[\(index)]",
                    message: "unknown property \"\(name)\" (known: "
                        + SpecProperty.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            return property
        }
        let path = { (key: Keys) in SpecKeys.path(c.codingPath + [key]) }
        if properties.isEmpty { throw SpecError(path: path(.properties), message: "at least one property is needed") }
        value = try c.decodeIfPresent(SpecValue.self, forKey: .value)?.data ?? Data()
        if value.count > 512 { throw SpecError(path: path(.value), message: "a value has at most 512 bytes") }
        notify = try c.decodeIfPresent(NotifySpec.self, forKey: .notify)
        if notify != nil && !properties.contains(.notify) && !properties.contains(.indicate) {
            throw SpecError(path: path(.notify), message: "needs the notify or indicate property")
        }
        if let text = try c.decodeIfPresent(String.self, forKey: .onWrite) {
            guard let behavior = WriteBehavior(rawValue: text) else {
                throw SpecError(path: path(.onWrite), message: "\"\(text)\" is not store or reject")
            }
            onWrite = behavior
        }
        descriptors = try c.decodeIfPresent([DescriptorSpec].self, forKey: .descriptors) ?? []
    }
}

extension NotifySpec: Decodable {
    private enum Keys: String, CodingKey, CaseIterable { case intervalMs, values }

    /// Decodes periodic notifications.
    public init(from decoder: any Decoder) throws {
        let c = try SpecKeys.container(decoder, Keys.self)
        intervalMs = try c.decode(Int.self, forKey: .intervalMs)
        guard (10...3_600_000).contains(intervalMs) else {
            throw SpecError(
                path: SpecKeys.path(c.codingPath + [Keys.intervalMs]), message: "from 10 to 3600000 milliseconds")
        }
        values = try c.decodeIfPresent([SpecValue].self, forKey: .values)?.map(\.data) ?? []
    }
}

extension DescriptorSpec: Decodable {
    private enum Keys: String, CodingKey, CaseIterable { case uuid, value, writable }

    /// Decodes a descriptor; 2902 is refused (BlueZ serves it).
    public init(from decoder: any Decoder) throws {
        let c = try SpecKeys.container(decoder, Keys.self)
        uuid = try c.decode(SpecUUID.self, forKey: .uuid).uuid
        if uuid == BluetoothUUID("2902") {
            throw SpecError(
                path: SpecKeys.path(c.codingPath + [Keys.uuid]),
                message: "2902 (Client Characteristic Configuration) is managed by BlueZ; leave it out")
        }
        value = try c.decodeIfPresent(SpecValue.self, forKey: .value)?.data ?? Data()
        writable = try c.decodeIfPresent(Bool.self, forKey: .writable) ?? false
    }
}

/// A UUID string that must be valid.
struct SpecUUID: Decodable {
    let uuid: BluetoothUUID

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let uuid = BluetoothUUID(validating: text) else {
            throw SpecError(path: SpecKeys.path(decoder.codingPath), message: "\"\(text)\" is not a UUID")
        }
        self.uuid = uuid
    }
}

/// A value written as an object with one key naming its format:
/// `{"hex": "0148"}`, `{"utf8": "hi"}`, `{"uint16": 300}`, `{"int8": [-1, 2]}`, `{"base64": "AUg="}`.
struct SpecValue: Decodable {
    let data: Data

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: SpecKeys.self)
        let path = SpecKeys.path(decoder.codingPath)
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw SpecError(path: path, message: "a value is an object with one key: \(ValueFormat.names)")
        }
        guard let format = ValueFormat(rawValue: key.stringValue) else {
            throw SpecError(path: path, message: "unknown value format \"\(key.stringValue)\" (\(ValueFormat.names))")
        }
        let text: String
        if format.width != nil, let number = try? c.decode(Int64.self, forKey: key) {
            text = String(number)
        } else if format.width != nil, let numbers = try? c.decode([Int64].self, forKey: key) {
            text = numbers.map(String.init).joined(separator: " ")
        } else {
            text = try c.decode(String.self, forKey: key)
        }
        do {
            data = try format.parse(text)
        } catch {
            throw SpecError(path: path + ".\(key.stringValue)", message: error.message)
        }
    }
}

/// Any key, for reading an object's keys and rejecting the unknown ones.
struct SpecKeys: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    /// A keyed container that refuses keys outside `Key`.
    static func container<Key: CodingKey & CaseIterable>(
        _ decoder: any Decoder, _ type: Key.Type
    ) throws -> KeyedDecodingContainer<Key> {
        let known = Set(Key.allCases.map(\.stringValue))
        let all = try decoder.container(keyedBy: SpecKeys.self)
        if let unknown = all.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            throw SpecError(
                path: path(decoder.codingPath),
                message: "unknown key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        return try decoder.container(keyedBy: Key.self)
    }

    /// `services[0].characteristics[1].uuid`
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }
}

extension SpecError {
    /// The decoder's own errors (wrong types, missing keys, bad JSON), with their path.
    init(_ error: DecodingError) {
        switch error {
        case .typeMismatch(let type, let context):
            self.init(path: SpecKeys.path(context.codingPath), message: "expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            self.init(path: SpecKeys.path(context.codingPath), message: "expected \(Self.describe(type)), found null")
        case .keyNotFound(let key, let context):
            self.init(path: SpecKeys.path(context.codingPath + [key]), message: "missing")
        case .dataCorrupted(let context):
            let underlying = (context.underlyingError as? NSError)?.userInfo["NSDebugDescription"] as? String
            let message = context.codingPath.isEmpty ? "not valid JSON" : context.debugDescription
            self.init(
                path: SpecKeys.path(context.codingPath), message: underlying.map { "\(message): \($0)" } ?? message)
        @unknown default:
            self.init(path: "", message: "\(error)")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is UInt16.Type, is Int64.Type: "a whole number"
        case is [Any].Type: "an array"
        default: "\(type)".contains("Array") ? "an array" : "an object"
        }
    }
}
