import BLESimulator
import BlueZ
import DBus
import Foundation
import Testing

/// `ReadValue`/`WriteValue` of remote characteristics and descriptors (bluez-dbus-api.md §1.6,
/// §4.4, §4.5, §13.4, Q5, Q11, Q26).
@Suite("Fidelity: GATT read and write", .timeLimit(.minutes(1)))
struct GattReadWriteFidelityTests {
    private static let characteristic = BlueZInterface.gattCharacteristic1

    private static func options(_ entries: [String: DBusValue] = [:]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            entries.keys.sorted().map { DBusDictionaryEntry(.string($0), .variant(entries[$0] ?? .boolean(false))) })
    }

    private static func write(
        _ client: RecordingClient, _ path: ObjectPath, _ value: Data, _ options: [String: DBusValue] = [:]
    ) async -> DBusError? {
        await client.error(path, characteristic, "WriteValue", [.bytes(value), Self.options(options)])
    }

    @Test("ReadValue: PropertiesChanged(Value) comes before the reply", arguments: Release.allCases)
    func readTrace(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            let body = try await client.call(Paths.location, Self.characteristic, "ReadValue", [Self.options()])
            #expect(body == [.bytes(Data([0x01]))])
            #expect(
                client.transcript.lines(since: mark) == [
                    "→ \(Paths.location.rawValue) GattCharacteristic1.ReadValue (@a{sv} {},)",
                    Trace.changed(Paths.location, Self.characteristic, "'Value': <[byte 0x01]>"),
                    Trace.reply("ReadValue", "([byte 0x01],)"),
                ])
            // The cached Value now holds what was read.
            #expect(try await client.get(Paths.location, Self.characteristic, "Value") == .bytes(Data([0x01])))
        }
    }

    @Test("Every read announces Value, even when the bytes did not change", arguments: Release.allCases)
    func repeatedReads(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let mark = client.transcript.mark
            for _ in 0..<3 { try await client.call(Paths.location, Self.characteristic, "ReadValue", [Self.options()]) }
            let values = client.transcript.since(mark).filter { $0.changedProperties["Value"] != nil }
            #expect(values.count == 3)
        }
    }

    @Test(
        "ReadValue options: offset (q) reads from there; offset as u is InvalidArguments; past the end is \"Invalid offset\"",
        arguments: Release.allCases)
    func readOffsets(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let read = try await client.call(
                Paths.data, Self.characteristic, "ReadValue", [Self.options(["offset": .uint16(2)])])
            #expect(read == [.bytes(Data("llo".utf8))])
            // Keys are case-insensitive; unknown keys are ignored.
            let upper = try await client.call(
                Paths.data, Self.characteristic, "ReadValue",
                [Self.options(["Offset": .uint16(4), "mtu": .uint16(23), "x-unknown": .boolean(true)])])
            #expect(upper == [.bytes(Data("o".utf8))])
            let atEnd = try await client.call(
                Paths.data, Self.characteristic, "ReadValue", [Self.options(["offset": .uint16(5)])])
            #expect(atEnd == [.bytes(Data())])
            let wrongType = await client.error(
                Paths.data, Self.characteristic, "ReadValue", [Self.options(["offset": .uint32(2)])])
            expectError(wrongType, BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments)
            let beyond = await client.error(
                Paths.data, Self.characteristic, "ReadValue", [Self.options(["offset": .uint16(6)])])
            expectError(beyond, BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidOffset)
            // ReadValue without its a{sv}: the method "does not exist" (Q26).
            let noOptions = await client.error(Paths.data, Self.characteristic, "ReadValue")
            expectError(
                noOptions, DBusError.StandardName.unknownMethod,
                "Method \"ReadValue\" with signature \"\" on interface \"org.bluez.GattCharacteristic1\" doesn't exist\n"
            )
        }
    }

    @Test(
        "An offset read writes into the cached Value at the offset and answers from the cache",
        arguments: Release.allCases)
    func offsetReadCache(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            #expect(
                try await client.call(Paths.data, Self.characteristic, "ReadValue", [Self.options()])
                    == [.bytes(Data("hello".utf8))])
            #expect(await Self.write(client, Paths.data, Data("HEY".utf8)) == nil)
            // The peer now holds "HEY"; reading from 1 gets "EY", stored over the cached
            // "hello" in place (`chrc_read_cb` → `gatt_db_attribute_write`), so bluetoothd
            // announces "hEYlo" and answers the cache from offset 1.
            let mark = client.transcript.mark
            let body = try await client.call(
                Paths.data, Self.characteristic, "ReadValue", [Self.options(["offset": .uint16(1)])])
            #expect(body == [.bytes(Data("EYlo".utf8))])
            #expect(
                client.transcript.lines(since: mark, kinds: [.signal])
                    == [
                        Trace.changed(
                            Paths.data, Self.characteristic, "'Value': <\(GVariantText.bytes(Data("hEYlo".utf8)))>")
                    ])
            // An offset-0 read empties the cache first.
            #expect(
                try await client.call(Paths.data, Self.characteristic, "ReadValue", [Self.options()])
                    == [.bytes(Data("HEY".utf8))])
        }
    }

    @Test(
        "Concurrent reads: the same offset shares one result, another offset is InProgress (Q5)",
        arguments: Release.allCases)
    func readCoalescing(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            // Long enough that the three calls below are all made while the first is held, even
            // on a machine loaded by the whole suite (3 s once was not).
            simulator.inject(SimulatedFault(.read, characteristic: UUIDs.data, action: .delay(.seconds(8))))
            let mark = client.transcript.mark
            let first = try await client.startPending(Paths.data, Self.characteristic, "ReadValue", [Self.options()])
            let second = try await client.startPending(Paths.data, Self.characteristic, "ReadValue", [Self.options()])
            let other = await client.error(
                Paths.data, Self.characteristic, "ReadValue", [Self.options(["offset": .uint16(1)])])
            expectError(other, BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
            #expect(try await first.value.get() == [.bytes(Data("hello".utf8))])
            #expect(try await second.value.get() == [.bytes(Data("hello".utf8))])
            // One read on the air, one Value change.
            #expect(client.transcript.since(mark).filter { $0.changedProperties["Value"] != nil }.count == 1)
        }
    }

    @Test("Descriptors read like characteristics; their Value is updated too", arguments: Release.allCases)
    func descriptorRead(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let body = try await client.call(
                Paths.dataDescription, BlueZInterface.gattDescriptor1, "ReadValue", [Self.options()])
            #expect(body == [.bytes(Data("Data".utf8))])
            #expect(
                try await client.get(Paths.dataDescription, BlueZInterface.gattDescriptor1, "Value")
                    == .bytes(Data("Data".utf8)))
        }
    }

    @Test(
        "WriteValue: request, command and reliable land in the peripheral; type is case-insensitive",
        arguments: Release.allCases)
    func writeTypes(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            for (type, byte) in [("request", UInt8(1)), ("command", 2), ("reliable", 3), ("Command", 4)] {
                #expect(await Self.write(client, Paths.data, Data([byte]), ["type": .string(type)]) == nil, "\(type)")
                #expect(
                    try simulator.value(address: Peripherals.sensorAddress, characteristic: UUIDs.data) == Data([byte]))
            }
            // A write does not touch the cached Value (only reads and notifications do).
            let mark = client.transcript.mark
            #expect(await Self.write(client, Paths.controlPoint, Data([0x01])) == nil)
            #expect(!client.transcript.since(mark).contains { $0.kind == .signal })
            #expect(
                client.transcript.lines(since: mark, kinds: [.reply]) == [Trace.reply("WriteValue")])
        }
    }

    @Test(
        "Without type the procedure follows the Flags; an explicit type is honoured without checking them",
        arguments: Release.allCases)
    func writeSelection(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            let long = Data(repeating: 0x5a, count: 245)  // MTU 247 − 3 = 244
            // write + write-without-response: Write Request (a long write when needed).
            #expect(await Self.write(client, Paths.data, long) == nil)
            // reliable-write: reliable long write.
            #expect(await Self.write(client, Paths.reliable, long) == nil)
            // write-without-response only: Write Command, limited to MTU − 3.
            expectError(
                await Self.write(client, Paths.command, long), BlueZErrorName.failed,
                BlueZErrorMessage.failedToInitiateWrite)
            #expect(await Self.write(client, Paths.command, Data(long.prefix(244))) == nil)
            // read only: nothing to select.
            expectError(
                await Self.write(client, Paths.readOnly, Data([1])), BlueZErrorName.notSupported,
                BlueZErrorMessage.notSupported)
            // Explicit types are not checked against the Flags: what happens is the peer's call.
            // This one lets nobody write the read-only value: it drops the command, refuses
            // the request (ATT 0x03).
            #expect(await Self.write(client, Paths.readOnly, Data([1]), ["type": .string("command")]) == nil)
            #expect(
                try simulator.value(address: Peripherals.sensorAddress, characteristic: UUIDs.readOnly) == Data([0x2a]))
            expectError(
                await Self.write(client, Paths.readOnly, Data([1]), ["type": .string("request")]),
                BlueZErrorName.notPermitted, BlueZErrorMessage.writeNotPermitted)
            #expect(await Self.write(client, Paths.command, long, ["type": .string("request")]) == nil)
            // command longer than MTU − 3 fails even when explicit.
            expectError(
                await Self.write(client, Paths.data, long, ["type": .string("command")]), BlueZErrorName.failed,
                BlueZErrorMessage.failedToInitiateWrite)
        }
    }

    @Test(
        "WriteValue option errors: unknown type, command at an offset, type not a string", arguments: Release.allCases)
    func writeOptionErrors(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            expectError(
                await Self.write(client, Paths.data, Data([1]), ["type": .string("fast")]),
                BlueZErrorName.notSupported, BlueZErrorMessage.notSupported)
            expectError(
                await Self.write(client, Paths.data, Data([1]), ["type": .string("command"), "offset": .uint16(1)]),
                BlueZErrorName.notSupported, BlueZErrorMessage.notSupported)
            expectError(
                await Self.write(client, Paths.data, Data([1]), ["type": .uint16(1)]),
                BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments)
            expectError(
                await Self.write(client, Paths.data, Data([1]), ["offset": .int32(1)]),
                BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments)
        }
    }

    @Test(
        "Writing a CCC descriptor is NotPermitted \"Write not permitted\"; others go to the peer",
        arguments: Release.allCases)
    func cccWrite(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            let error = await client.error(
                Paths.measurementCCC, BlueZInterface.gattDescriptor1, "WriteValue",
                [.bytes(Data([0x01, 0x00])), Self.options()])
            expectError(error, BlueZErrorName.notPermitted, BlueZErrorMessage.writeNotPermitted)
            // Other descriptors: bluetoothd writes them; this peripheral refuses (ATT 0x03).
            let description = await client.error(
                Paths.dataDescription, BlueZInterface.gattDescriptor1, "WriteValue",
                [.bytes(Data([0x41])), Self.options()])
            expectError(description, BlueZErrorName.notPermitted, BlueZErrorMessage.writeNotPermitted)
        }
    }

    @Test(
        "A write request pending on a characteristic makes the next write InProgress (Q5)", arguments: Release.allCases)
    func writeInProgress(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.write, characteristic: UUIDs.data, action: .delay(.seconds(8))))
            let pending = try await client.startPending(
                Paths.data, Self.characteristic, "WriteValue", [.bytes(Data([1])), Self.options()])
            // Even a command is refused while a request is outstanding.
            expectError(
                await Self.write(client, Paths.data, Data([2]), ["type": .string("command")]),
                BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
            #expect(try await pending.value.get() == [])
        }
    }

    @Test(
        "A link's writes reach the peer in order: a command after a held one is taken after it",
        arguments: Release.allCases)
    func writesInOrder(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.write, characteristic: UUIDs.data, action: .delay(.milliseconds(300))))
            let command = Self.options(["type": .string("command")])
            // Queued on the bus before the next call: the simulator receives them in this order.
            let held = try await client.startPending(
                Paths.data, Self.characteristic, "WriteValue", [.bytes(Data([1])), command])
            // No fault for this one: taken at once, it would leave the peer with the held value.
            #expect(await Self.write(client, Paths.data, Data([2]), ["type": .string("command")]) == nil)
            #expect(try await held.value.get() == [], "the held write succeeded")
            #expect(try simulator.value(address: Peripherals.sensorAddress, characteristic: UUIDs.data) == Data([2]))
        }
    }

    @Test(
        "A write held when the link drops does not hold back the writes of the next link", arguments: Release.allCases)
    func writeOrderEndsWithTheLink(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { simulator, client, _ in
            try await client.connectSensor()
            simulator.inject(SimulatedFault(.write, characteristic: UUIDs.data, action: .delay(.seconds(60))))
            let held = try await client.startPending(
                Paths.data, Self.characteristic, "WriteValue",
                [.bytes(Data([1])), Self.options(["type": .string("command")])])
            try simulator.dropLink(address: Peripherals.sensorAddress)
            guard case .failure = await held.value else {
                Issue.record("the held write succeeded")
                return
            }
            try await client.connectAndResolve()
            #expect(await Self.write(client, Paths.data, Data([2]), ["type": .string("command")]) == nil)
            #expect(try simulator.value(address: Peripherals.sensorAddress, characteristic: UUIDs.data) == Data([2]))
        }
    }

    @Test("GATT calls on a disconnected device: Failed \"Not connected\"", arguments: Release.allCases)
    func notConnected(release: Release) async throws {
        try await Fidelity.run(release, peripherals: [Peripherals.sensor()]) { _, client, _ in
            try await client.connectSensor()
            try await client.call(Paths.sensor, BlueZInterface.device1, "Disconnect")
            let calls: [(ObjectPath, InterfaceName, String, [DBusValue])] = [
                (Paths.location, Self.characteristic, "ReadValue", [Self.options()]),
                (Paths.data, Self.characteristic, "WriteValue", [.bytes(Data([1])), Self.options()]),
                (Paths.data, Self.characteristic, "AcquireWrite", [Self.options()]),
                (Paths.data, Self.characteristic, "AcquireNotify", [Self.options()]),
                (Paths.dataDescription, BlueZInterface.gattDescriptor1, "ReadValue", [Self.options()]),
                (
                    Paths.dataDescription, BlueZInterface.gattDescriptor1, "WriteValue",
                    [.bytes(Data([1])), Self.options()]
                ),
            ]
            for (path, interface, member, arguments) in calls {
                let error = await client.error(path, interface, member, arguments)
                #expect(error?.name == BlueZErrorName.failed, "\(member) \(path)")
                #expect(error?.message == BlueZErrorMessage.notConnected, "\(member) \(path)")
            }
        }
    }
}
