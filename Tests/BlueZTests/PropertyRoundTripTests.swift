import BlueZ
import DBus
import Foundation
import Testing

/// Every property type, fully populated: decoding, encoding and applying agree on every key.
@Suite struct PropertyRoundTripTests {
    /// `full` survives encoding; applying its properties to `minimal` gives `full`; invalidating
    /// everything leaves exactly the `required` keys.
    func check<P: BlueZInterfaceProperties>(full: P, minimal: P, required: Set<String>) throws {
        let encoded = full.dbusProperties
        for value in encoded.values { try value.validate() }
        #expect(try P(properties: encoded) == full)
        #expect(try P(properties: encoded.mapValues { .variant($0) }) == full)
        #expect(
            try P(properties: ObjectManagerCoding.decodeProperties(ObjectManagerCoding.encodeProperties(encoded)))
                == full)

        var updated = minimal
        try updated.apply(changed: encoded.mapValues { .variant($0) }, invalidated: [])
        #expect(updated == full)

        var cleared = full
        try cleared.apply(changed: [:], invalidated: Array(encoded.keys))
        #expect(Set(cleared.dbusProperties.keys) == required)
        #expect(Set(minimal.dbusProperties.keys) == required)
    }

    @Test func adapter() throws {
        let address = try BluetoothAddress("00:1A:7D:DA:71:13")
        let full = AdapterProperties(
            address: address, addressType: .random, name: "n", alias: "a", deviceClass: 7, connectable: false,
            powered: true, powerState: .offEnabling, discoverable: true, discoverableTimeout: 9, pairable: false,
            pairableTimeout: 3, discovering: true, uuids: ["u"], modalias: "m", roles: ["central"],
            experimentalFeatures: ["f"], manufacturer: 2, version: 13)
        let minimal = AdapterProperties(address: address, name: "", alias: "", powered: false)
        try check(
            full: full, minimal: minimal,
            required: [
                "Address", "AddressType", "Name", "Alias", "Class", "Powered", "Discoverable", "DiscoverableTimeout",
                "Pairable", "PairableTimeout", "Discovering", "UUIDs", "Roles",
            ])
    }

    @Test func device() throws {
        let adapter = try Fixture.path(Fixture.adapterText)
        let address = try BluetoothAddress("C4:7C:8D:6A:11:22")
        let full = DeviceProperties(
            address: address, addressType: .random, name: "n", alias: "a", deviceClass: 1, appearance: 2, icon: "i",
            paired: true, bonded: true, trusted: true, blocked: true, legacyPairing: true, cablePairing: true,
            rssi: -3, txPower: 4, connected: true, uuids: ["u"], modalias: "m", adapter: adapter,
            manufacturerData: [5: Data([5])], serviceData: ["s": Data([6])], servicesResolved: true,
            advertisingFlags: Data([7]), advertisingData: [8: Data([8])], wakeAllowed: true,
            sets: [adapter: ["Rank": .byte(1)]], preferredBearer: "le")
        let minimal = DeviceProperties(address: address, bonded: nil, adapter: adapter)
        try check(
            full: full, minimal: minimal,
            required: [
                "Address", "AddressType", "Alias", "Paired", "Trusted", "Blocked", "LegacyPairing", "Connected",
                "UUIDs",
                "Adapter", "ServicesResolved",
            ])
    }

    @Test func gatt() throws {
        let device = try Fixture.path(Fixture.deviceText)
        try check(
            full: GattServiceProperties(uuid: "u", primary: false, device: device, includes: [device], handle: 1),
            minimal: GattServiceProperties(uuid: "", primary: true), required: ["UUID", "Primary"])
        try check(
            full: GattCharacteristicProperties(
                uuid: "u", service: device, value: Data([1]), notifying: true, flags: [.read, .secureNotify],
                unknownFlags: ["z"], writeAcquired: false, notifyAcquired: true, mtu: 23, handle: 2),
            minimal: GattCharacteristicProperties(uuid: "", service: .root, flags: []),
            required: ["UUID", "Service", "Flags"])
        try check(
            full: GattDescriptorProperties(
                uuid: "u", characteristic: device, value: Data([2]), flags: [.authorize], unknownFlags: ["y"], handle: 3
            ),
            minimal: GattDescriptorProperties(uuid: "", characteristic: .root), required: ["UUID", "Characteristic"])
    }

    @Test func advertising() throws {
        let capabilities = AdvertisingCapabilities(
            maxAdvertisingDataLength: 31, maxScanResponseLength: 31, minTxPower: -20, maxTxPower: 10,
            other: ["X": .boolean(true)])
        try check(
            full: LEAdvertisingManagerProperties(
                activeInstances: 1, supportedInstances: 2, supportedIncludes: ["rsi"],
                supportedSecondaryChannels: ["1M"],
                supportedFeatures: ["HardwareOffload"], supportedCapabilities: capabilities),
            minimal: LEAdvertisingManagerProperties(supportedInstances: 0),
            required: ["ActiveInstances", "SupportedInstances", "SupportedIncludes"])

        var full = LEAdvertisementProperties(type: .broadcast)
        full.serviceUUIDs = ["a"]
        full.manufacturerData = [1: Data([1])]
        full.solicitUUIDs = ["b"]
        full.serviceData = ["c": Data([2])]
        full.data = [3: Data([3])]
        full.scanResponseServiceUUIDs = ["d"]
        full.scanResponseManufacturerData = [4: Data([4])]
        full.scanResponseSolicitUUIDs = ["e"]
        full.scanResponseServiceData = ["f": Data([5])]
        full.scanResponseData = [6: Data([6])]
        full.discoverable = false
        full.discoverableTimeout = 7
        full.includes = ["tx-power"]
        full.localName = "g"
        full.appearance = 8
        full.duration = 9
        full.timeout = 10
        full.secondaryChannel = "Coded"
        full.minInterval = 11
        full.maxInterval = 12
        full.txPower = -13
        full.instance = 14
        #expect(full.dbusProperties.count == 23)
        try check(full: full, minimal: LEAdvertisementProperties(type: .peripheral), required: ["Type"])
    }

    @Test func battery() throws {
        try check(
            full: BatteryProperties(percentage: 1, source: "s"), minimal: BatteryProperties(percentage: 0),
            required: ["Percentage"])
    }
}
