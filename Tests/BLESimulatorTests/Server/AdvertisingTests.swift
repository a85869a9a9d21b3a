import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `LEAdvertisingManager1` and the advertisements applications register (bluez-dbus-api.md §6).
@Suite("Server: advertising")
struct AdvertisingTests {
    @Test("LEAdvertisingManager1 properties on 5.66: instances, includes, secondary channels only")
    func managerProperties566() async throws {
        try await ServerHarness.run(profile: .v5_66) { _, app, _ in
            let properties = try await app.advertisingManagerProperties()
            #expect(properties["ActiveInstances"] == .byte(0))
            #expect(properties["SupportedInstances"] == .byte(5))
            #expect(
                properties["SupportedIncludes"]
                    == .array(.string, [.string("tx-power"), .string("appearance"), .string("local-name")]))
            #expect(
                properties["SupportedSecondaryChannels"]
                    == .array(.string, [.string("1M"), .string("2M"), .string("Coded")]))
            #expect(properties["SupportedFeatures"] == nil)
            #expect(properties["SupportedCapabilities"] == nil)
        }
    }

    @Test("LEAdvertisingManager1 on 5.87 also has SupportedFeatures and SupportedCapabilities")
    func managerProperties587() async throws {
        try await ServerHarness.run(profile: .v5_87) { _, app, _ in
            let properties = try await app.advertisingManagerProperties()
            let manager = try LEAdvertisingManagerProperties(properties: properties)
            #expect(manager.supportedFeatures == ["CanSetTxPower"])
            #expect(manager.supportedCapabilities?.maxAdvertisingDataLength == 31)
            #expect(manager.supportedCapabilities?.maxScanResponseLength == 31)
        }
    }

    @Test("RegisterAdvertisement reads the object with GetAll; the snapshot and the instance counts follow")
    func registers() async throws {
        try await ServerHarness.run { simulator, app, _ in
            try app.exportAdvertisement("advertisement0", ServerFixtures.advertisement)
            try await app.registerAdvertisement("advertisement0")
            let advertisement = try #require(simulator.advertisements.first)
            #expect(advertisement.owner == app.connection.uniqueName)
            #expect(advertisement.path == app.path("advertisement0"))
            #expect(advertisement.instance == 1)
            #expect(advertisement.type == .peripheral)
            #expect(advertisement.localName == "swift-ble")
            #expect(advertisement.serviceUUIDs == ["180D"])
            #expect(advertisement.manufacturerData == [0x004C: Data([1, 2, 3])])
            #expect(advertisement.serviceData == ["180D": Data([9])])
            #expect(advertisement.includes == ["tx-power"])
            #expect(advertisement.appearance == 0x0341)
            #expect(advertisement.discoverable)
            #expect(advertisement.timeout == nil)
            let properties = try await app.advertisingManagerProperties()
            #expect(properties["ActiveInstances"] == .byte(1))
            #expect(properties["SupportedInstances"] == .byte(4))
            // UnregisterAdvertisement does not call Release.
            try await app.unregisterAdvertisement("advertisement0")
            #expect(simulator.advertisements.isEmpty)
            #expect(try await app.advertisingManagerProperties()["ActiveInstances"] == .byte(0))
            #expect(app.log.calls("Release").isEmpty)
        }
    }

    @Test("On 5.87 bluetoothd writes the instance into an exported Instance property")
    func instanceWrittenBack() async throws {
        try await ServerHarness.run(profile: .v5_87) { _, app, _ in
            for index in 0..<2 {
                var properties = ServerFixtures.advertisement
                properties["Instance"] = .byte(0)
                try app.exportAdvertisement("advertisement\(index)", properties, writable: ["Instance"])
                try await app.registerAdvertisement("advertisement\(index)")
            }
            let instance = app.connection.property(
                "Instance", interface: BlueZInterface.leAdvertisement1, path: app.path("advertisement1"))
            #expect(instance == .byte(2))
        }
    }

    @Test("Five advertisements at most: the sixth gets NotPermitted \"Maximum advertisements reached\"")
    func maximum() async throws {
        try await ServerHarness.run { simulator, app, _ in
            for index in 0..<6 { try app.exportAdvertisement("advertisement\(index)", ServerFixtures.advertisement) }
            for index in 0..<5 { try await app.registerAdvertisement("advertisement\(index)") }
            #expect(simulator.advertisements.map(\.instance) == [1, 2, 3, 4, 5])
            let error = await registrationError { () async throws(DBusError) in
                try await app.registerAdvertisement("advertisement5")
            }
            #expect(error?.name == BlueZErrorName.notPermitted)
            #expect(error?.message == BlueZErrorMessage.maximumAdvertisementsReached)
            #expect(try await app.advertisingManagerProperties()["SupportedInstances"] == .byte(0))
            // A freed instance is reused.
            try await app.unregisterAdvertisement("advertisement2")
            try await app.registerAdvertisement("advertisement5")
            #expect(simulator.advertisements.last?.instance == 3)
        }
    }

    @Test("AlreadyExists for the same sender and path; DoesNotExist when unregistering twice")
    func duplicates() async throws {
        try await ServerHarness.run { _, app, _ in
            try app.exportAdvertisement("advertisement0", ServerFixtures.advertisement)
            try await app.registerAdvertisement("advertisement0")
            let twice = await registrationError { () async throws(DBusError) in
                try await app.registerAdvertisement("advertisement0")
            }
            #expect(twice?.name == BlueZErrorName.alreadyExists)
            try await app.unregisterAdvertisement("advertisement0")
            let gone = await registrationError { () async throws(DBusError) in
                try await app.unregisterAdvertisement("advertisement0")
            }
            #expect(gone?.name == BlueZErrorName.doesNotExist)
            #expect(gone?.message == BlueZErrorMessage.doesNotExist)
        }
    }

    /// One malformed advertisement.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var change: [String: DBusValue?]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unknown Type", change: ["Type": .string("beacon")]),
        Case(name: "missing Type", change: ["Type": .none]),
        Case(name: "Type of the wrong D-Bus type", change: ["Type": .uint16(1)]),
        Case(
            name: "empty ManufacturerData value",
            change: [
                "ManufacturerData": .dictionary(
                    key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(Data())))])
            ]),
        Case(
            name: "ManufacturerData keyed by string",
            change: [
                "ManufacturerData": .dictionary(
                    key: .string, value: .variant, [DBusDictionaryEntry(.string("76"), .variant(.bytes(Data([1]))))])
            ]),
        Case(
            name: "broadcast and discoverable", change: ["Type": .string("broadcast"), "Discoverable": .boolean(true)]),
        Case(
            name: "DiscoverableTimeout above Timeout",
            change: ["DiscoverableTimeout": .uint16(30), "Timeout": .uint16(10)]),
        Case(
            name: "MinInterval above MaxInterval", change: ["MinInterval": .uint32(200), "MaxInterval": .uint32(100)]),
        Case(name: "interval below 20 ms", change: ["MinInterval": .uint32(10)]),
        Case(name: "TxPower above +20 dBm", change: ["TxPower": .int16(21)]),
        Case(name: "unknown SecondaryChannel", change: ["SecondaryChannel": .string("3M")]),
        Case(name: "invalid service UUID", change: ["ServiceUUIDs": .array(.string, [.string("nope")])]),
        Case(
            name: "Data with a type bluetoothd builds itself",
            change: [
                "Data": .dictionary(
                    key: .byte, value: .variant, [DBusDictionaryEntry(.byte(0x09), .variant(.bytes(Data([65]))))])
            ]),
    ]

    @Test("A malformed advertisement gets Failed \"Failed to parse advertisement.\"", arguments: cases)
    func refused(_ testCase: Case) async throws {
        try await ServerHarness.run { simulator, app, _ in
            var properties = ServerFixtures.advertisement
            for (key, value) in testCase.change { properties[key] = value }
            try app.exportAdvertisement("advertisement0", properties)
            let error = await registrationError { () async throws(DBusError) in
                try await app.registerAdvertisement("advertisement0")
            }
            #expect(error?.name == BlueZErrorName.failed)
            #expect(error?.message == BlueZErrorMessage.failedToParseAdvertisement)
            #expect(simulator.advertisements.isEmpty)
            #expect(try await app.advertisingManagerProperties()["SupportedInstances"] == .byte(5))
        }
    }

    @Test("An advertisement object that does not exist fails to parse")
    func missingObject() async throws {
        try await ServerHarness.run { _, app, _ in
            let error = await registrationError { () async throws(DBusError) in
                try await app.registerAdvertisement("nothing")
            }
            #expect(error?.message == BlueZErrorMessage.failedToParseAdvertisement)
        }
    }

    @Test("Timeout expiry: bluetoothd calls Release (no reply expected) and drops the advertisement")
    func timeoutReleases() async throws {
        try await ServerHarness.run { simulator, app, _ in
            var properties = ServerFixtures.advertisement
            properties["Timeout"] = .uint16(1)
            try app.exportAdvertisement("advertisement0", properties)
            try await app.registerAdvertisement("advertisement0")
            #expect(simulator.advertisements.count == 1)
            let release = try #require(try await app.log.wait(for: "Release").first)
            #expect(release.path == app.path("advertisement0"))
            #expect(release.interface == BlueZInterface.leAdvertisement1)
            #expect(release.noReplyExpected)
            try await eventually { simulator.advertisements.isEmpty }
            #expect(try await app.advertisingManagerProperties()["ActiveInstances"] == .byte(0))
        }
    }

    @Test("Live updates: a PropertiesChanged of the advertisement updates what bluetoothd holds")
    func liveUpdates() async throws {
        try await ServerHarness.run { simulator, app, _ in
            var properties = ServerFixtures.advertisement
            properties["TxPower"] = .int16(0)
            try app.exportAdvertisement("advertisement0", properties)
            try await app.registerAdvertisement("advertisement0")
            let path = app.path("advertisement0")
            try app.connection.setProperty(
                "LocalName", to: .string("renamed"), interface: BlueZInterface.leAdvertisement1, path: path)
            try await eventually { simulator.advertisements.first?.localName == "renamed" }
            // An update that would not parse is ignored.
            try app.connection.setProperty(
                "TxPower", to: .int16(100), interface: BlueZInterface.leAdvertisement1, path: path)
            try app.connection.setProperty(
                "LocalName", to: .string("again"), interface: BlueZInterface.leAdvertisement1, path: path)
            try await eventually { simulator.advertisements.first?.localName == "again" }
            #expect(simulator.advertisements.first?.txPower == 0)
        }
    }
}
