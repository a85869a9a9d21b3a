import Foundation

/// A simulated BLE peripheral: what it advertises and the GATT database it serves.
///
/// Declarative and `Codable`, so scenarios can be written as JSON (see `Scenarios/`). Byte
/// values are ``HexData`` (hex strings in JSON).
public struct VirtualPeripheral: Sendable, Hashable, Codable {
    /// The device address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// `"public"` or `"random"`.
    public var addressType: String = "public"
    /// The advertised local name, if any.
    public var name: String?
    /// Milliseconds between advertisements.
    public var advertisingIntervalMs: Int = 100
    /// Mean received signal strength, dBm.
    public var rssi: Int16 = -60
    /// Random variation of each report's RSSI, ± dBm.
    public var rssiJitter: Int16 = 0
    /// Advertised TX power, dBm.
    public var txPower: Int16?
    /// Whether it accepts connections.
    public var connectable: Bool = true
    /// Whether its advertisement carries the LE General Discoverable flag. Without it, a
    /// discovery with no filter creates no device object (bluetoothd's rule, quirk Q13).
    public var discoverable: Bool = true
    /// Service UUIDs in the advertisement.
    public var serviceUUIDs: [String] = []
    /// Manufacturer data by company identifier.
    public var manufacturerData: [UInt16: HexData] = [:]
    /// Service data by service UUID.
    public var serviceData: [String: HexData] = [:]
    /// Appearance, if advertised.
    public var appearance: UInt16?
    /// Other AD structures of its advertisement, by AD type (0x26 Transport Discovery Data,
    /// 0x30 Broadcast Name, …). bluetoothd passes on in `Device1.AdvertisingData` only the
    /// types it does not decode itself (``AdvertisingDataTypes``); the others are left out there.
    public var advertisingData: [UInt8: HexData] = [:]
    /// Whether it is advertising now (a stopped advertiser can still be connected if known).
    public var advertising: Bool = true
    /// The ATT MTU it negotiates.
    public var mtu: UInt16 = 247
    /// Its GATT database, after the standard services.
    public var services: [VirtualService] = []
    /// Generic Access and Generic Attribute, served ahead of ``services`` as real peripherals
    /// do (on by default); nil leaves them out, and then ``services`` may declare its own.
    public var standardServices: StandardServices? = StandardServices()
    /// How it pairs (Just Works by default).
    public var pairing = SimulatedPairing()
    /// The L2CAP PSMs it publishes (see ``Simulator/l2capTransport``).
    public var l2capServers: [VirtualL2CAPServer] = []

    /// Creates a peripheral.
    public init(address: String, name: String? = nil, services: [VirtualService] = []) {
        self.address = address
        self.name = name
        self.services = services
    }

    private enum CodingKeys: String, CodingKey {
        case address, addressType, name, advertisingIntervalMs, rssi, rssiJitter, txPower, connectable
        case discoverable, serviceUUIDs, manufacturerData, serviceData, appearance, advertisingData, advertising, mtu
        case services, standardServices, pairing, l2capServers
    }

    /// Decodes a peripheral; every field but `address` is optional. A declared `1800` or
    /// `1801` service is an error unless `standardServices` is false.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        address = try c.decode(String.self, forKey: .address)
        addressType = try c.decodeIfPresent(String.self, forKey: .addressType) ?? "public"
        name = try c.decodeIfPresent(String.self, forKey: .name)
        advertisingIntervalMs = try c.decodeIfPresent(Int.self, forKey: .advertisingIntervalMs) ?? 100
        rssi = try c.decodeIfPresent(Int16.self, forKey: .rssi) ?? -60
        rssiJitter = try c.decodeIfPresent(Int16.self, forKey: .rssiJitter) ?? 0
        txPower = try c.decodeIfPresent(Int16.self, forKey: .txPower)
        connectable = try c.decodeIfPresent(Bool.self, forKey: .connectable) ?? true
        discoverable = try c.decodeIfPresent(Bool.self, forKey: .discoverable) ?? true
        serviceUUIDs = try c.decodeIfPresent([String].self, forKey: .serviceUUIDs) ?? []
        manufacturerData = try Self.numberedData(c, .manufacturerData, what: "company id")
        serviceData = try c.decodeIfPresent([String: HexData].self, forKey: .serviceData) ?? [:]
        appearance = try c.decodeIfPresent(UInt16.self, forKey: .appearance)
        advertisingData = try Self.numberedData(c, .advertisingData, what: "AD type")
        advertising = try c.decodeIfPresent(Bool.self, forKey: .advertising) ?? true
        mtu = try c.decodeIfPresent(UInt16.self, forKey: .mtu) ?? 247
        services = try c.decodeIfPresent([VirtualService].self, forKey: .services) ?? []
        if let on = try? c.decodeIfPresent(Bool.self, forKey: .standardServices) {
            standardServices = on ? StandardServices() : nil
        } else {
            standardServices =
                try c.decodeIfPresent(StandardServices.self, forKey: .standardServices) ?? StandardServices()
        }
        if let clash = declaredStandardService {
            throw DecodingError.dataCorruptedError(
                forKey: .services, in: c,
                debugDescription: "service \(clash) is a standard service: describe it with standardServices, "
                    + "or set standardServices to false to declare it")
        }
        pairing = try c.decodeIfPresent(SimulatedPairing.self, forKey: .pairing) ?? SimulatedPairing()
        l2capServers = try c.decodeIfPresent([VirtualL2CAPServer].self, forKey: .l2capServers) ?? []
    }

    /// Data by a number written as the JSON key: decimal (`107`), else hex (`0x6B`, `6B`).
    private static func numberedData<Number: FixedWidthInteger>(
        _ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, what: String
    ) throws -> [Number: HexData] {
        let written = try c.decodeIfPresent([String: HexData].self, forKey: key) ?? [:]
        return try Dictionary(
            uniqueKeysWithValues: written.map { text, value in
                guard let number = Number(text) ?? Number(text.replacingOccurrences(of: "0x", with: ""), radix: 16)
                else {
                    throw DecodingError.dataCorruptedError(
                        forKey: key, in: c, debugDescription: "\(what) \(text) is not a number that fits")
                }
                return (number, value)
            })
    }

    /// Encodes with company ids and AD types as decimal strings.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(address, forKey: .address)
        try c.encode(addressType, forKey: .addressType)
        try c.encodeIfPresent(name, forKey: .name)
        try c.encode(advertisingIntervalMs, forKey: .advertisingIntervalMs)
        try c.encode(rssi, forKey: .rssi)
        try c.encode(rssiJitter, forKey: .rssiJitter)
        try c.encodeIfPresent(txPower, forKey: .txPower)
        try c.encode(connectable, forKey: .connectable)
        try c.encode(discoverable, forKey: .discoverable)
        try c.encode(serviceUUIDs, forKey: .serviceUUIDs)
        try c.encode(
            Dictionary(uniqueKeysWithValues: manufacturerData.map { (String($0.key), $0.value) }),
            forKey: .manufacturerData)
        try c.encode(serviceData, forKey: .serviceData)
        try c.encodeIfPresent(appearance, forKey: .appearance)
        if !advertisingData.isEmpty {
            try c.encode(
                Dictionary(uniqueKeysWithValues: advertisingData.map { (String($0.key), $0.value) }),
                forKey: .advertisingData)
        }
        try c.encode(advertising, forKey: .advertising)
        try c.encode(mtu, forKey: .mtu)
        try c.encode(services, forKey: .services)
        switch standardServices {
        case nil: try c.encode(false, forKey: .standardServices)
        case StandardServices()?: try c.encode(true, forKey: .standardServices)
        case let custom?: try c.encode(custom, forKey: .standardServices)
        }
        if pairing != SimulatedPairing() { try c.encode(pairing, forKey: .pairing) }
        if !l2capServers.isEmpty { try c.encode(l2capServers, forKey: .l2capServers) }
    }
}

/// A GATT service of a ``VirtualPeripheral``.
public struct VirtualService: Sendable, Hashable, Codable {
    /// The service UUID (16-, 32- or 128-bit form).
    public var uuid: String
    /// Primary or secondary.
    public var primary: Bool = true
    /// UUIDs of other services of the same peripheral that this one includes.
    public var includes: [String] = []
    /// Its characteristics.
    public var characteristics: [VirtualCharacteristic] = []

    /// Creates a service.
    public init(uuid: String, primary: Bool = true, includes: [String] = [], characteristics: [VirtualCharacteristic]) {
        self.uuid = uuid
        self.primary = primary
        self.includes = includes
        self.characteristics = characteristics
    }

    private enum CodingKeys: String, CodingKey { case uuid, primary, includes, characteristics }

    /// Decodes a service; `primary` defaults to true.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try c.decode(String.self, forKey: .uuid)
        primary = try c.decodeIfPresent(Bool.self, forKey: .primary) ?? true
        includes = try c.decodeIfPresent([String].self, forKey: .includes) ?? []
        characteristics = try c.decodeIfPresent([VirtualCharacteristic].self, forKey: .characteristics) ?? []
    }
}

/// A characteristic of a ``VirtualService``.
public struct VirtualCharacteristic: Sendable, Hashable, Codable {
    /// The characteristic UUID.
    public var uuid: String
    /// BlueZ flag strings: `read`, `write`, `write-without-response`, `notify`, `indicate`, …
    public var flags: [String]
    /// The initial value.
    public var value: HexData = HexData()
    /// While some central is subscribed, push a value this often (milliseconds).
    public var notifyIntervalMs: Int?
    /// The values pushed in turn while subscribed (the current value when empty).
    public var notifyValues: [HexData] = []
    /// ATT error (e.g. 0x02) answered to reads, for characteristics that refuse them.
    public var readError: UInt8?
    /// ATT error answered to writes.
    public var writeError: UInt8?
    /// Its descriptors (not CCC 0x2902, which follows from the flags).
    public var descriptors: [VirtualDescriptor] = []

    /// Creates a characteristic.
    public init(uuid: String, flags: [String], value: HexData = HexData(), descriptors: [VirtualDescriptor] = []) {
        self.uuid = uuid
        self.flags = flags
        self.value = value
        self.descriptors = descriptors
    }

    private enum CodingKeys: String, CodingKey {
        case uuid, flags, value, notifyIntervalMs, notifyValues, readError, writeError, descriptors
    }

    /// Decodes a characteristic.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try c.decode(String.self, forKey: .uuid)
        flags = try c.decode([String].self, forKey: .flags)
        value = try c.decodeIfPresent(HexData.self, forKey: .value) ?? HexData()
        notifyIntervalMs = try c.decodeIfPresent(Int.self, forKey: .notifyIntervalMs)
        notifyValues = try c.decodeIfPresent([HexData].self, forKey: .notifyValues) ?? []
        readError = try c.decodeIfPresent(UInt8.self, forKey: .readError)
        writeError = try c.decodeIfPresent(UInt8.self, forKey: .writeError)
        descriptors = try c.decodeIfPresent([VirtualDescriptor].self, forKey: .descriptors) ?? []
    }
}

/// A descriptor of a ``VirtualCharacteristic``.
public struct VirtualDescriptor: Sendable, Hashable, Codable {
    /// The descriptor UUID, e.g. `2901` (user description).
    public var uuid: String
    /// Its value.
    public var value: HexData = HexData()
    /// Whether centrals may write it.
    public var writable: Bool = false

    /// Creates a descriptor.
    public init(uuid: String, value: HexData = HexData(), writable: Bool = false) {
        self.uuid = uuid
        self.value = value
        self.writable = writable
    }

    private enum CodingKeys: String, CodingKey { case uuid, value, writable }

    /// Decodes a descriptor.
    public init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uuid = try c.decode(String.self, forKey: .uuid)
        value = try c.decodeIfPresent(HexData.self, forKey: .value) ?? HexData()
        writable = try c.decodeIfPresent(Bool.self, forKey: .writable) ?? false
    }
}

/// Bytes written in JSON as a hex string (`"0a1B"`, spaces and colons allowed), or as
/// `{"utf8": "text"}` for readable strings.
public struct HexData: Sendable, Hashable, Codable, ExpressibleByArrayLiteral {
    /// The bytes.
    public var data: Data

    /// Wraps bytes.
    public init(_ data: Data = Data()) { self.data = data }

    /// Bytes from a literal.
    public init(arrayLiteral elements: UInt8...) { data = Data(elements) }

    /// Parses hex; nil when it is not hex.
    public init?(hex: String) {
        let digits = hex.filter { !" :-".contains($0) }
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        data = Data(bytes)
    }

    private enum CodingKeys: String, CodingKey { case utf8 }

    /// Decodes a hex string or `{"utf8": …}`.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            guard let parsed = HexData(hex: text) else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "\"\(text)\" is not hex")
            }
            self = parsed
            return
        }
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let keyed = try decoder.container(keyedBy: CodingKeys.self)
        data = Data(try keyed.decode(String.self, forKey: .utf8).utf8)
    }

    /// Encodes as a lower-case hex string.
    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(data.map { String(format: "%02x", $0) }.joined())
    }
}
