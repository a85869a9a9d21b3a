import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// Powering the adapter off mid-operation (bluez-dbus-api.md §2.3, §2.4, Q16, Q17).
@Suite("Fidelity: adapter power", .timeLimit(.minutes(1)))
struct PowerFidelityTests {
    /// How the adapter is switched off.
    enum Switch: String, CaseIterable, Sendable {
        /// `Properties.Set(Powered=false)` from the client.
        case dbus
        /// From outside bluetoothd (rfkill, another tool): ``Simulator/setPowered(_:adapter:)``.
        case simulator
    }

    private static func index(_ lines: [String], _ fragment: String) -> Int? {
        lines.firstIndex { $0.contains(fragment) }
    }

    @Test(
        "Power off while connected and discovering: Connected=false, Discovering=false, Powered=false",
        arguments: Release.allCases, Switch.allCases)
    func powerOffMidOperation(release: Release, switching: Switch) async throws {
        var kept = Peripherals.sensor()
        kept.address = "C4:00:00:00:00:05"
        let temporary = Paths.path("/org/bluez/hci0/dev_C4_00_00_00_00_05")
        try await Fidelity.run(release, peripherals: [Peripherals.sensor(), kept, Peripherals.beacon()]) {
            simulator, client, _ in
            // The second peripheral is found with the sensor and kept (connectable, temporary);
            // the scan waits for both, as on a slow machine the sensor alone may end it first.
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.sensor)
            try await client.waitForDevice(temporary)
            try await client.stopDiscovery()
            try await client.connectAndResolve()
            #expect(await client.setDiscoveryFilter(["Transport": .string("le")]) == nil)
            try await client.startDiscovery()
            try await client.waitForDevice(Paths.beacon)
            let off = client.transcript.mark
            switch switching {
            case .dbus: try await client.set(Paths.adapter, BlueZInterface.adapter1, "Powered", .boolean(false))
            case .simulator: simulator.setPowered(false)
            }
            try await client.transcript.first("Powered=false", since: off) {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Powered"] == .boolean(false)
            }
            let lines = client.transcript.lines(since: off, kinds: [.signal])
            let connected = try #require(Self.index(lines, "'Connected': <false>"), "\(lines)")
            let discovering = try #require(Self.index(lines, "'Discovering': <false>"), "\(lines)")
            let beaconGone = try #require(Self.index(lines, "InterfacesRemoved \(Paths.beacon.rawValue)"), "\(lines)")
            let powered = try #require(Self.index(lines, "'Powered': <false>"), "\(lines)")
            #expect(connected < discovering)
            // `adapter_stop`'s Discovering=false goes out with Powered, in one signal.
            #expect(discovering == powered)
            #expect(beaconGone < powered)
            // Powered is announced once.
            #expect(lines.filter { $0.contains("'Powered'") }.count == 1)
            if release == .bluez587 {
                // A D-Bus Set passes through the transitional state (`set_mode`); rfkill does not.
                let states = lines.filter { $0.contains("'PowerState'") }
                let expected = switching == .dbus ? ["'on-disabling'", "'off'"] : ["'off'"]
                #expect(states.count == expected.count, "\(states)")
                for (line, state) in zip(states, expected) { #expect(line.contains(state), "\(line)") }
            }
            // The connected device had become persistent: it stays, disconnected. Setting
            // Powered=false removes every temporary device first; rfkill leaves connectable ones.
            let tree = try await client.managedObjects()
            #expect(tree.properties(Paths.sensor, BlueZInterface.device1)?["Connected"] == .boolean(false))
            #expect(tree.objects[Paths.beacon] == nil)
            #expect((tree.objects[temporary] == nil) == (switching == .dbus))
            // `adapter_stop` zeroes the class; powering on sets it again.
            #expect(tree.properties(Paths.adapter, BlueZInterface.adapter1)?["Class"] == .uint32(0))
            // Discovery does not resume on power-on.
            try await client.set(Paths.adapter, BlueZInterface.adapter1, "Powered", .boolean(true))
            #expect(try await client.get(Paths.adapter, BlueZInterface.adapter1, "Class") == .uint32(0x6c_010c))
            #expect(try await client.get(Paths.adapter, BlueZInterface.adapter1, "Discovering") == .boolean(false))
            let stop = await client.error(Paths.adapter, BlueZInterface.adapter1, "StopDiscovery")
            expectError(stop, BlueZErrorName.failed, BlueZErrorMessage.noDiscoveryStarted)
        }
    }

    @Test(
        "Set(Powered) replies first, then announces once; off says Discovering=false with no discovery running",
        arguments: Release.allCases)
    func setPoweredRepliesBeforeItAnnounces(release: Release) async throws {
        try await Fidelity.run(release, peripherals: []) { _, client, _ in
            let off = client.transcript.mark
            try await client.set(Paths.adapter, BlueZInterface.adapter1, "Powered", .boolean(false))
            let powerOff = try await client.transcript.first("Powered=false", since: off) {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Powered"] == .boolean(false)
            }
            try await client.settle()
            var lines = client.transcript.lines(since: off, kinds: [.reply, .signal])
            let offReply = try #require(lines.firstIndex { $0.hasPrefix("← Set") }, "\(lines)")
            #expect(offReply < (Self.index(lines, "'Powered': <false>") ?? -1), "\(lines)")
            let changes = powerOff.changedProperties
            #expect(changes["Discovering"] == .boolean(false))
            #expect(changes["Class"] == .uint32(0))
            #expect(lines.filter { $0.contains("'Powered'") }.count == 1)
            #expect(lines.filter { $0.contains("'Discovering'") }.count == 1, "\(lines)")

            // Powering on: the kernel's class change before the reply, Powered after it.
            let on = client.transcript.mark
            try await client.set(Paths.adapter, BlueZInterface.adapter1, "Powered", .boolean(true))
            try await client.transcript.first("Powered=true", since: on) {
                $0.isPropertiesChanged(Paths.adapter, BlueZInterface.adapter1)
                    && $0.changedProperties["Powered"] == .boolean(true)
            }
            try await client.settle()
            lines = client.transcript.lines(since: on, kinds: [.reply, .signal])
            let classSet = try #require(Self.index(lines, "'Class'"), "\(lines)")
            let reply = try #require(lines.firstIndex { $0.hasPrefix("← Set") }, "\(lines)")
            let powered = try #require(Self.index(lines, "'Powered': <true>"), "\(lines)")
            #expect(classSet < reply && reply < powered, "\(lines)")

            // The value it already has: a reply, nothing announced.
            let again = client.transcript.mark
            try await client.set(Paths.adapter, BlueZInterface.adapter1, "Powered", .boolean(true))
            try await client.settle()
            #expect(client.transcript.lines(since: again, kinds: [.signal]).isEmpty)
        }
    }

    @Test(
        "Powered off: Connect fails le-connection-abort-by-local; a pending Connect fails too",
        arguments: Release.allCases)
    func connectWhileOff(release: Release) async throws {
        var options = SimulatorOptions()
        options.connectDelay = .seconds(30)
        try await Fidelity.run(release, options: options, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.discoverSensor()
            let pending = try await client.startPending(Paths.sensor, BlueZInterface.device1, "Connect")
            simulator.setPowered(false)
            guard case .failure(let error) = await pending.value else {
                Issue.record("the pending Connect succeeded")
                return
            }
            #expect(error.name == BlueZErrorName.failed)
            let now = await client.error(Paths.sensor, BlueZInterface.device1, "Connect")
            expectError(now, BlueZErrorName.failed, "le-connection-abort-by-local")
        }
    }
}
