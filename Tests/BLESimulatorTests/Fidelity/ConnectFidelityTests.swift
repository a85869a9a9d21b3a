import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `Device1.Connect`/`Disconnect` and service resolution (bluez-dbus-api.md §1.2, §3.1, §3.4,
/// §4.1–§4.5, §13.2, §13.5, Q1–Q4, Q10, Q23).
@Suite("Fidelity: connect and disconnect", .timeLimit(.minutes(1)))
struct ConnectFidelityTests {
    private static let gatt = (
        service: Trace.gdbus(BlueZInterface.gattService1),
        characteristic: Trace.gdbus(BlueZInterface.gattCharacteristic1),
        descriptor: Trace.gdbus(BlueZInterface.gattDescriptor1)
    )

    /// Every GATT object of the sensor the release exports, in handle order, with its interface
    /// list: the standard services first (GAP, claimed, only from 5.80), then the declared ones.
    static func gattObjects(_ release: Release) -> [(ObjectPath, [String])] {
        let genericAccess = [
            (Paths.genericAccess, gatt.service), (Paths.deviceName, gatt.characteristic),
            (Paths.appearance, gatt.characteristic),
        ]
        let genericAttribute = [
            (Paths.genericAttribute, gatt.service), (Paths.serviceChanged, gatt.characteristic),
            (Paths.serviceChangedCCC, gatt.descriptor),
        ]
        return (release == .bluez587 ? genericAccess : []) + genericAttribute + declaredObjects
    }

    private static let declaredObjects: [(ObjectPath, [String])] = [
        (Paths.heartRate, gatt.service),
        (Paths.measurement, gatt.characteristic), (Paths.measurementCCC, gatt.descriptor),
        (Paths.location, gatt.characteristic), (Paths.controlPoint, gatt.characteristic),
        (Paths.custom, gatt.service),
        (Paths.data, gatt.characteristic), (Paths.dataCCC, gatt.descriptor), (Paths.dataDescription, gatt.descriptor),
        (Paths.reliable, gatt.characteristic), (Paths.command, gatt.characteristic),
        (Paths.indicate, gatt.characteristic), (Paths.indicateCCC, gatt.descriptor),
        (Paths.readOnly, gatt.characteristic),
    ]

    private static func connected(_ on: Bool) -> String {
        Trace.changed(Paths.sensor, BlueZInterface.device1, "'Connected': <\(on)>")
    }

    /// The disconnect trace of each release (§3.4 step 6, §13.5), with the reply to a local
    /// Disconnect where the release sends it: 5.66 between the two changes (the real daemon's
    /// trace, Tests/RealBlueZTests/Traces), later releases at the end.
    static func disconnectTrace(_ release: Release, reason: DisconnectReason, reply: String? = nil) -> [String] {
        let resolved = Trace.changed(Paths.sensor, BlueZInterface.device1, "'ServicesResolved': <false>")
        switch release {
        case .bluez566:
            return [resolved] + (reply.map { [$0] } ?? []) + [connected(false)]
        case .bluez587:
            return [
                resolved, "★ \(Paths.sensor.rawValue) Disconnected ('\(reason.name)', '\(reason.message)')",
                connected(false),
            ] + (reply.map { [$0] } ?? [])
        }
    }

    @Test(
        "First connect: Connected=true, reply, one InterfacesAdded per GATT object, then UUIDs and ServicesResolved",
        arguments: Release.allCases)
    func connectTrace(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.discoverSensor()
            let mark = client.transcript.mark
            try await client.connectAndResolve()
            // The claimed GAP service is in UUIDs on every release.
            let uuids = [UUIDs.genericAccess, UUIDs.genericAttribute, UUIDs.heartRate, UUIDs.custom]
                .map { "'\($0)'" }.joined(separator: ", ")
            let expected =
                [
                    "→ \(Paths.sensor.rawValue) Device1.Connect ()", Self.connected(true), Trace.reply("Connect"),
                ] + Self.gattObjects(release).map { Trace.added($0.0, $0.1) } + [
                    Trace.changed(
                        Paths.sensor, BlueZInterface.device1, "'UUIDs': <[\(uuids)]>, 'ServicesResolved': <true>")
                ]
            #expect(client.transcript.lines(since: mark) == expected)
        }
    }

    @Test(
        "GATT objects: paths by declaration handle, properties and types of each release", arguments: Release.allCases)
    func gattObjectShapes(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let tree = try await client.managedObjects()
            #expect(tree.paths(under: Paths.sensor) == Self.gattObjects(release).map(\.0).sorted())
            let handles = release == .bluez587

            let service = try #require(tree.properties(Paths.heartRate, BlueZInterface.gattService1))
            var serviceTypes = ["UUID": "s", "Primary": "b", "Device": "o", "Includes": "ao"]
            if handles { serviceTypes["Handle"] = "q" }
            #expect(TreeValue.signatures(service) == serviceTypes)
            #expect(service["UUID"] == .string(UUIDs.heartRate))
            #expect(service["Device"] == .objectPath(Paths.sensor))
            #expect(service["Includes"] == .array(.objectPath, []))
            if handles { #expect(service["Handle"] == .uint16(0x000a)) }

            // notify: Notifying and NotifyAcquired; MTU while connected; Value [] until read.
            let measurement = try #require(tree.properties(Paths.measurement, BlueZInterface.gattCharacteristic1))
            var types = [
                "UUID": "s", "Service": "o", "Value": "ay", "Notifying": "b", "Flags": "as", "NotifyAcquired": "b",
                "MTU": "q",
            ]
            if handles { types["Handle"] = "q" }
            #expect(TreeValue.signatures(measurement) == types)
            #expect(measurement["Value"] == .bytes(Data()))
            #expect(measurement["MTU"] == .uint16(247))
            #expect(measurement["Flags"] == .array(.string, [.string("notify")]))
            if handles { #expect(measurement["Handle"] == .uint16(0x000b)) }

            // write-without-response: WriteAcquired; no Notifying.
            let command = try #require(tree.properties(Paths.command, BlueZInterface.gattCharacteristic1))
            var commandTypes = [
                "UUID": "s", "Service": "o", "Value": "ay", "Flags": "as", "WriteAcquired": "b", "MTU": "q",
            ]
            if handles { commandTypes["Handle"] = "q" }
            #expect(TreeValue.signatures(command) == commandTypes)

            // indicate only: Notifying, but NotifyAcquired needs `notify` in both releases.
            let indicate = try #require(tree.properties(Paths.indicate, BlueZInterface.gattCharacteristic1))
            #expect(indicate["Notifying"] == .boolean(false))
            #expect(indicate["NotifyAcquired"] == nil)

            let ccc = try #require(tree.properties(Paths.measurementCCC, BlueZInterface.gattDescriptor1))
            var descriptorTypes = ["UUID": "s", "Characteristic": "o", "Value": "ay"]
            if handles { descriptorTypes["Handle"] = "q" }
            #expect(TreeValue.signatures(ccc) == descriptorTypes)
            #expect(ccc["UUID"] == .string(UUIDs.ccc))
            #expect(ccc["Characteristic"] == .objectPath(Paths.measurement))
            if handles { #expect(ccc["Handle"] == .uint16(0x000d)) }
            let description = try #require(tree.properties(Paths.dataDescription, BlueZInterface.gattDescriptor1))
            #expect(description["UUID"] == .string(UUIDs.userDescription))
        }
    }

    @Test("MTU exists while connected and silently stops existing after disconnect (Q10)", arguments: Release.allCases)
    func mtuLifetime(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            #expect(try await client.get(Paths.data, BlueZInterface.gattCharacteristic1, "MTU") == .uint16(247))
            let mark = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            let error = await client.error(
                Paths.data, .properties, "Get", [.string(BlueZInterface.gattCharacteristic1.rawValue), .string("MTU")])
            expectError(error, DBusError.StandardName.invalidArgs, "No such property 'MTU'")
            // No PropertiesChanged names MTU: the exchange hook is tied to the first ATT link.
            #expect(!client.transcript.since(mark).contains { $0.invalidatedProperties.contains("MTU") })
            // GATT objects stay (Cache=always).
            #expect(try await client.managedObjects().objects[Paths.data] != nil)
            let reconnect = client.transcript.mark
            try await client.connectAndResolve()
            #expect(try await client.get(Paths.data, BlueZInterface.gattCharacteristic1, "MTU") == .uint16(247))
            #expect(!client.transcript.since(reconnect).contains { $0.changedProperties["MTU"] != nil })
        }
    }

    @Test(
        "Reconnect with cached services: no InterfacesAdded; Connected=true, reply, ServicesResolved=true",
        arguments: Release.allCases)
    func reconnectUsesCache(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let before = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            // 5.66 announces Connected=false after its Disconnect reply: not part of the reconnect.
            try await client.waitForDisconnected(since: before)
            let mark = client.transcript.mark
            try await client.connectAndResolve()
            #expect(
                client.transcript.lines(since: mark) == [
                    "→ \(Paths.sensor.rawValue) Device1.Connect ()", Self.connected(true), Trace.reply("Connect"),
                    Trace.changed(Paths.sensor, BlueZInterface.device1, "'ServicesResolved': <true>"),
                ])
        }
    }

    @Test("Connect on a connected device succeeds at once; Disconnect on an idle one too", arguments: Release.allCases)
    func idempotentCalls(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.discoverSensor()
            let idle = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            #expect(client.transcript.lines(since: idle, kinds: [.reply, .signal]) == [Trace.reply("Disconnect")])
            try await client.connectAndResolve()
            let again = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Connect")
            #expect(client.transcript.lines(since: again, kinds: [.reply, .signal]) == [Trace.reply("Connect")])
        }
    }

    @Test("Disconnect: the release's trace with its reply; GATT objects stay", arguments: Release.allCases)
    func disconnectTrace(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            // 5.66 says Connected=false after the reply: the whole trace is there only then.
            try await client.waitForDisconnected(since: mark)
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply, .signal])
                    == Self.disconnectTrace(release, reason: .local, reply: Trace.reply("Disconnect")))
            let tree = try await client.managedObjects()
            #expect(tree.paths(under: Paths.sensor).count == Self.gattObjects(release).count)
            #expect(tree.properties(Paths.sensor, BlueZInterface.device1)?["Connected"] == .boolean(false))
        }
    }

    @Test("A second Connect while one is pending: 5.66 Failed, 5.87 InProgress", arguments: Release.allCases)
    func concurrentConnect(release: Release) async throws {
        var options = SimulatorOptions()
        options.connectDelay = .seconds(3)
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.discoverSensor()
            let first = try await client.startPending(Paths.sensor, BlueZInterface.device1, "Connect")
            let second = await client.error(Paths.sensor, BlueZInterface.device1, "Connect")
            if release == .bluez587 {
                expectError(second, BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
            } else {
                expectError(second, BlueZErrorName.failed, BlueZErrorMessage.operationAlreadyInProgress)
            }
            #expect(try await first.value.get() == [])
        }
    }

    @Test(
        "Disconnect during a pending Connect: the Connect fails br-connection-canceled, Disconnect succeeds",
        arguments: Release.allCases)
    func disconnectCancelsConnect(release: Release) async throws {
        var options = SimulatorOptions()
        options.connectDelay = .seconds(30)
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.discoverSensor()
            let pending = try await client.startPending(Paths.sensor, BlueZInterface.device1, "Connect")
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            guard case .failure(let error) = await pending.value else {
                Issue.record("the pending Connect succeeded")
                return
            }
            expectError(error, BlueZErrorName.failed, "br-connection-canceled")
            // The link never came up: no Connected signal either way.
            #expect(!client.transcript.entries.contains { $0.changedProperties["Connected"] != nil })
        }
    }

    @Test(
        "Connect to a peripheral that does not accept connections: Failed le-connection-abort-by-local",
        arguments: Release.allCases)
    func nonConnectable(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.beacon()]) { _, client, _ in
            #expect(await client.setDiscoveryFilter(["Transport": .string("le")]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.beacon)
            let error = await client.error(Paths.beacon, BlueZInterface.device1, "Connect")
            expectError(error, BlueZErrorName.failed, "le-connection-abort-by-local")
            #expect(!client.transcript.entries.contains { $0.changedProperties["Connected"] != nil })
        }
    }

    @Test(
        "Connect makes the device persistent: it outlives TemporaryTimeout and a bluetoothd restart, without RSSI",
        arguments: Release.allCases)
    func connectMakesPersistent(release: Release) async throws {
        var options = SimulatorOptions()
        options.temporaryTimeout = .milliseconds(300)
        var other = Peripherals.sensor()
        other.address = "C4:00:00:00:00:09"
        let otherPath = Paths.path("/org/bluez/hci0/dev_C4_00_00_00_00_09")
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor(), other]) {
            simulator, client, _ in
            // Every report is announced (DuplicateData), so "seen after X" is observable; the
            // scan keeps both devices fresh until the sensor is connected.
            #expect(await client.setDiscoveryFilter(["DuplicateData": .boolean(true)]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            try await client.waitForDevice(otherPath)
            try await client.connectAndResolve()
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            try simulator.updatePeripheral(address: Peripherals.sensorAddress) { $0.advertising = false }
            // The other device is seen after the sensor's last activity, then expires: a
            // temporary sensor would have gone first.
            let mark = client.transcript.mark
            try await client.transcript.first("other seen again", since: mark) {
                $0.isPropertiesChanged(otherPath, BlueZInterface.device1)
                    && $0.changedProperties["ManufacturerData"] != nil
            }
            try await client.stopDiscovery()
            try await client.transcript.first("other expired", since: mark) {
                $0.member == "InterfacesRemoved" && $0.objectManagerSubject == otherPath
            }
            #expect(try await client.managedObjects().objects[Paths.sensor] != nil)

            // Stored: back after a restart, without RSSI or advertising data, not connected.
            let restart = client.transcript.mark
            try await simulator.restartDaemon()
            try await client.transcript.count(2, "owner changes", since: restart) { $0.member == "NameOwnerChanged" }
            let tree = try await client.managedObjects()
            let device = try #require(tree.properties(Paths.sensor, BlueZInterface.device1))
            #expect(device["RSSI"] == nil)
            #expect(device["TxPower"] == nil)
            #expect(device["ManufacturerData"] == nil)
            #expect(device["Connected"] == .boolean(false))
            #expect(device["ServicesResolved"] == .boolean(false))
            #expect(tree.objects[otherPath] == nil)
            // No GATT objects until the device connects again (§4.1).
            #expect(tree.paths(under: Paths.sensor).isEmpty)
        }
    }
}
