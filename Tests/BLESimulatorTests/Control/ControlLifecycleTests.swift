import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Testing

/// The control interface's place on the bus: its name, its signatures, its independence from
/// the bluetoothd connection, and Restart.
@Suite struct ControlLifecycleTests {
    @Test func namesAreTheDocumentedOnes() {
        #expect(SimulatorControlInterface.busName.rawValue == "org.swiftble.Simulator")
        #expect(SimulatorControlInterface.objectPath.rawValue == "/org/swiftble/Simulator")
        #expect(SimulatorControlInterface.interface.rawValue == "org.swiftble.Simulator1")
        #expect(SimulatorControlError.invalidJSON == "org.swiftble.Simulator.Error.InvalidJSON")
    }

    @Test func controlNameIsOwnedByItsOwnConnection() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            let control = try #require(try await client.nameOwner(of: SimulatorControlInterface.busName))
            let bluez = try await client.nameOwner(of: BlueZService.busName)
            #expect(bluez == simulator.uniqueName)
            #expect(control != bluez)
        }
    }

    /// bluetoothd's `GetManagedObjects` lists `/org/bluez` objects only; the control object
    /// must not leak into it.
    @Test func controlObjectStaysOutOfTheBlueZTree() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let reply = try await ControlHarness.bluez(client, .root, .objectManager, "GetManagedObjects")
            let objects = try ObjectManagerCoding.decodeManagedObjects(try #require(reply.body.first))
            #expect(objects.keys.allSatisfy { $0.isInNamespace(BlueZService.managerPath) })
        }
    }

    @Test func introspectionShowsTheExactSignatures() async throws {
        try await ControlHarness.withSimulator { _, _, client in
            let reply = try await client.call(
                destination: SimulatorControlInterface.busName, path: SimulatorControlInterface.objectPath,
                interface: .introspectable, member: try MemberName("Introspect"))
            let xml: String = try reply.argument(0)
            let expected: [(String, String, String)] = [
                ("AddPeripheral", "s", ""), ("RemovePeripheral", "s", ""), ("UpdatePeripheral", "ss", ""),
                ("Notify", "ssay", "u"), ("StartNotifications", "ssuuu", ""), ("InjectFault", "s", ""),
                ("ClearFaults", "", ""), ("DropLink", "su", ""), ("SetPowered", "ub", ""), ("Restart", "", ""),
                ("Value", "ss", "ay"), ("Statistics", "", "a{sv}"),
            ]
            for (name, inputs, outputs) in expected {
                let found = Self.signature(of: name, in: xml)
                #expect(found?.0 == inputs && found?.1 == outputs, "\(name): \(String(describing: found))")
            }
        }
    }

    @Test func restartReplacesBluetoothdAndControlStillAnswers() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            let before = try #require(try await client.nameOwner(of: BlueZService.busName))
            let control = try await client.nameOwner(of: SimulatorControlInterface.busName)
            let owners = ControlSignalReader(try await client.nameOwnerChanges(of: BlueZService.busName).subscription)
            try await ControlHarness.control(client, "Restart")
            // Answered only once the new daemon owns the name: both edges are already on their way.
            let gone = try Self.owners(await owners.next())
            let back = try Self.owners(await owners.next())
            #expect(gone.old == before.rawValue && gone.new.isEmpty)
            #expect(back.old.isEmpty)
            let after = try BusName(back.new)
            #expect(after != before)
            #expect(simulator.uniqueName == after)
            #expect(try await client.nameOwner(of: BlueZService.busName) == after)
            #expect(try await client.nameOwner(of: SimulatorControlInterface.busName) == control)
            let statistics = try await ControlHarness.control(client, "Statistics")
            #expect(statistics.signature == "a{sv}")
        }
    }

    @Test func stopReleasesTheControlName() async throws {
        try await ControlHarness.withSimulator { _, simulator, client in
            let changes = ControlSignalReader(
                try await client.nameOwnerChanges(of: SimulatorControlInterface.busName).subscription)
            simulator.stop()
            #expect(try Self.owners(await changes.next()).new.isEmpty)
            #expect(try await client.nameOwner(of: SimulatorControlInterface.busName) == nil)
        }
    }

    @Test func controlInterfaceCanBeLeftOut() async throws {
        var options = SimulatorOptions()
        options.controlInterface = false
        try await ControlHarness.withSimulator(options: options) { _, _, client in
            let owner = try await client.nameOwner(of: SimulatorControlInterface.busName)
            #expect(owner == nil)
        }
    }

    /// The old and new owners in a `NameOwnerChanged` signal (empty for none).
    private static func owners(_ signal: DBusMessage?) throws -> (old: String, new: String) {
        let signal = try #require(signal, "NameOwnerChanged did not arrive")
        return (try signal.argument(1), try signal.argument(2))
    }

    /// The `in` and `out` argument types of `method` in introspection XML, concatenated.
    private static func signature(of method: String, in xml: String) -> (String, String)? {
        guard let start = xml.range(of: "<method name=\"\(method)\">"),
            let end = xml.range(of: "</method>", range: start.upperBound..<xml.endIndex)
        else { return nil }
        var inputs = ""
        var outputs = ""
        for line in xml[start.upperBound..<end.lowerBound].split(separator: "\n") {
            guard let typeStart = line.range(of: "type=\""),
                let typeEnd = line.range(of: "\"", range: typeStart.upperBound..<line.endIndex)
            else { continue }
            let type = String(line[typeStart.upperBound..<typeEnd.lowerBound])
            if line.contains("direction=\"out\"") { outputs += type } else { inputs += type }
        }
        return (inputs, outputs)
    }
}
