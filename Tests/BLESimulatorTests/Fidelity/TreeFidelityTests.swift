import BLESimulator
import BlueZ
import DBus
import Testing

/// The object tree and the standard interfaces (bluez-dbus-api.md §1.3–§1.5, §1.8, §2.3, §12).
@Suite("Fidelity: object tree", .timeLimit(.minutes(1)))
struct TreeFidelityTests {
    private static let introspectable = InterfaceName.introspectable.rawValue
    private static let properties = InterfaceName.properties.rawValue

    @Test(
        "GetManagedObjects lists Introspectable and Properties with empty dicts, in gdbus order",
        arguments: Release.allCases)
    func managedObjectsShape(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let tree = try await client.managedObjects()
            // /org/bluez has no interface with properties, so no Properties entry (§12).
            #expect(
                tree.interfaces(Paths.manager) == [
                    Self.introspectable, BlueZInterface.agentManager1.rawValue, "org.bluez.ProfileManager1",
                ])
            for name in tree.interfaces(Paths.manager) {
                #expect(tree.objects[Paths.manager]?.first { $0.name == name }?.properties.isEmpty == true)
            }
            // Introspectable first, Properties right after the first interface with properties.
            let adapter = tree.interfaces(Paths.adapter)
            #expect(Array(adapter.prefix(3)) == Trace.gdbus(BlueZInterface.adapter1))
            #expect(tree.properties(Paths.adapter, .introspectable)?.isEmpty == true)
            #expect(tree.properties(Paths.adapter, .properties)?.isEmpty == true)
            // Nothing but the manager, the adapter (and no device: nothing was discovered yet).
            #expect(tree.objects.keys.sorted() == [Paths.manager, Paths.adapter])
        }
    }

    @Test("Adapter1 has the properties and exact D-Bus types of each release", arguments: Release.allCases)
    func adapterProperties(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let properties = try #require(
                try await client.managedObjects().properties(Paths.adapter, BlueZInterface.adapter1))
            var expected: [String: String] = [
                "Address": "s", "AddressType": "s", "Name": "s", "Alias": "s", "Class": "u", "Powered": "b",
                "Discoverable": "b", "DiscoverableTimeout": "u", "Pairable": "b", "PairableTimeout": "u",
                "Discovering": "b", "UUIDs": "as", "Modalias": "s", "Roles": "as",
            ]
            if release == .bluez587 {
                // PowerState ≥5.73 (experimental before), Connectable ≥5.79, Manufacturer/Version ≥5.71.
                expected.merge(["PowerState": "s", "Connectable": "b", "Manufacturer": "q", "Version": "y"]) { $1 }
            }
            #expect(TreeValue.signatures(properties) == expected)
            #expect(properties["Address"] == .string("00:1A:7D:DA:71:13"))
            #expect(properties["Powered"] == .boolean(true))
            #expect(properties["Discovering"] == .boolean(false))
            if release == .bluez587 { #expect(properties["PowerState"] == .string("on")) }
            // GetAll answers the same set.
            #expect(TreeValue.signatures(try await client.getAll(Paths.adapter, BlueZInterface.adapter1)) == expected)
        }
    }

    @Test("PowerState is hidden on 5.66: Get → InvalidArgs \"No such property\"")
    func powerStateHiddenOn566() async throws {
        try await Fidelity.run(.bluez566) { _, client, _ in
            let error = await client.error(
                Paths.adapter, .properties, "Get", [.string(BlueZInterface.adapter1.rawValue), .string("PowerState")])
            expectError(error, DBusError.StandardName.invalidArgs, "No such property 'PowerState'")
        }
    }

    @Test("An absent optional property: Get → InvalidArgs \"No such property 'RSSI'\"", arguments: Release.allCases)
    func absentOptionalProperty(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            // Discovered, then StopDiscovery invalidated RSSI: the property no longer exists.
            try await client.discoverSensor()
            let error = await client.error(
                Paths.sensor, .properties, "Get", [.string(BlueZInterface.device1.rawValue), .string("RSSI")])
            expectError(error, DBusError.StandardName.invalidArgs, "No such property 'RSSI'")
            let all = try await client.getAll(Paths.sensor, BlueZInterface.device1)
            #expect(all["RSSI"] == nil)
            #expect(all["TxPower"] == nil)
            // Always-present properties stay (§10.3).
            #expect(all["UUIDs"] != nil)
            #expect(all["Alias"] == .string("HRM"))
        }
    }

    @Test("Properties errors: unknown interface and unknown property", arguments: Release.allCases)
    func propertiesErrors(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let noInterface = await client.error(Paths.adapter, .properties, "GetAll", [.string("org.bluez.Nope1")])
            expectError(noInterface, DBusError.StandardName.invalidArgs, "No such interface 'org.bluez.Nope1'")
            let readOnly = await client.error(
                Paths.adapter, .properties, "Set",
                [.string(BlueZInterface.adapter1.rawValue), .string("Address"), .variant(.string("x"))])
            expectError(readOnly, DBusError.StandardName.propertyReadOnly, "Property 'Address' is not writable")
            let badType = await client.error(
                Paths.adapter, .properties, "Set",
                [.string(BlueZInterface.adapter1.rawValue), .string("Alias"), .variant(.uint32(1))])
            expectError(badType, "org.freedesktop.DBus.Error.InvalidSignature", "Invalid signature for 'Alias'")
        }
    }

    @Test("A wrong signature is UnknownMethod with libdbus's message", arguments: Release.allCases)
    func wrongSignature(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let error = await client.error(Paths.adapter, BlueZInterface.adapter1, "SetDiscoveryFilter")
            expectError(
                error, DBusError.StandardName.unknownMethod,
                "Method \"SetDiscoveryFilter\" with signature \"\" on interface \"org.bluez.Adapter1\" doesn't exist\n")
            let extra = await client.error(Paths.adapter, BlueZInterface.adapter1, "StartDiscovery", [.boolean(true)])
            expectError(
                extra, DBusError.StandardName.unknownMethod,
                "Method \"StartDiscovery\" with signature \"b\" on interface \"org.bluez.Adapter1\" doesn't exist\n")
            let unknown = await client.error(Paths.adapter, BlueZInterface.adapter1, "Frobnicate")
            expectError(
                unknown, DBusError.StandardName.unknownMethod,
                "Method \"Frobnicate\" with signature \"\" on interface \"org.bluez.Adapter1\" doesn't exist\n")
        }
    }

    @Test("A call to an unregistered path is UnknownObject with libdbus's message", arguments: Release.allCases)
    func unknownObject(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let missing = Paths.path("/org/bluez/hci0/dev_00_11_22_33_44_55")
            let connect = await client.error(missing, BlueZInterface.device1, "Connect")
            expectError(
                connect, DBusError.StandardName.unknownObject,
                "Method \"Connect\" with signature \"\" on interface \"org.bluez.Device1\" doesn't exist\n")
            let get = await client.error(
                Paths.path("/org/bluez/hci1"), .properties, "Get",
                [.string(BlueZInterface.adapter1.rawValue), .string("Powered")])
            expectError(
                get, DBusError.StandardName.unknownObject,
                "Method \"Get\" with signature \"ss\" on interface \"org.freedesktop.DBus.Properties\" doesn't exist\n")
        }
    }

    @Test("GetDiscoveryFilters lists the parser keys of each release", arguments: Release.allCases)
    func discoveryFilterKeys(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let body = try await client.call(Paths.adapter, BlueZInterface.adapter1, "GetDiscoveryFilters")
            var keys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]
            if release == .bluez587 { keys.append("AutoConnect") }
            #expect(body == [.array(.string, keys.map { .string($0) })])
        }
    }
}
