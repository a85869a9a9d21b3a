import BLESimulator
import BlueZ
import DBus
import Testing

/// `Adapter1.SetDiscoveryFilter` validation (bluez-dbus-api.md §2.1, §2.2, Q26).
@Suite("Fidelity: discovery filter", .timeLimit(.minutes(1)))
struct DiscoveryFilterFidelityTests {
    private static let invalid = (BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments)

    @Test("Bad filters are InvalidArguments \"Invalid arguments in method call\"", arguments: Release.allCases)
    func rejectsBadFilters(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let bad: [(String, [String: DBusValue])] = [
                ("unknown key", ["Frequency": .uint16(2402)]),
                ("Pathloss as n instead of q", ["Pathloss": .int16(50)]),
                ("RSSI as i instead of n", ["RSSI": .int32(-60)]),
                ("RSSI below -127", ["RSSI": .int16(-128)]),
                ("RSSI above 20", ["RSSI": .int16(21)]),
                ("Pathloss above 137", ["Pathloss": .uint16(138)]),
                ("RSSI and Pathloss together", ["RSSI": .int16(-60), "Pathloss": .uint16(40)]),
                ("unknown Transport", ["Transport": .string("usb")]),
                ("Transport of the wrong case", ["Transport": .string("LE")]),
                ("a UUID that does not parse", ["UUIDs": .array(.string, [.string("not-a-uuid")])]),
                ("UUIDs as a string", ["UUIDs": .string("180d")]),
                ("DuplicateData as a string", ["DuplicateData": .string("true")]),
            ]
            for (what, filter) in bad {
                let error = await client.setDiscoveryFilter(filter)
                #expect(error?.name == Self.invalid.0, "\(what)")
                #expect(error?.message == Self.invalid.1, "\(what)")
            }
        }
    }

    @Test("Valid filters, the limits and the empty dict are accepted", arguments: Release.allCases)
    func acceptsValidFilters(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let good: [[String: DBusValue]] = [
                ["Transport": .string("le"), "DuplicateData": .boolean(false)],
                ["Transport": .string("auto")],
                ["Transport": .string("bredr")],
                ["RSSI": .int16(-127)],
                ["RSSI": .int16(20)],
                ["Pathloss": .uint16(137)],
                ["UUIDs": .array(.string, [.string("180d"), .string("0000180f-0000-1000-8000-00805f9b34fb")])],
                ["Pattern": .string("")],
                ["Discoverable": .boolean(true)],
                [:],
            ]
            for filter in good {
                let error = await client.setDiscoveryFilter(filter)
                #expect(error == nil, "\(filter.keys.sorted())")
            }
            let lines = client.transcript.lines(kinds: [.reply])
            #expect(lines == Array(repeating: Trace.reply("SetDiscoveryFilter"), count: good.count))
        }
    }

    @Test("AutoConnect is a filter key only from 5.83", arguments: Release.allCases)
    func autoConnectKey(release: Release) async throws {
        try await Fidelity.run(release) { _, client, _ in
            let error = await client.setDiscoveryFilter(["Pattern": .string("C4:"), "AutoConnect": .boolean(false)])
            if release == .bluez587 {
                #expect(error == nil)
            } else {
                expectError(error, Self.invalid.0, Self.invalid.1)
            }
        }
    }

    @Test("Powered off: NotReady, checked before the arguments", arguments: Release.allCases)
    func notReadyFirst(release: Release) async throws {
        var options = SimulatorOptions()
        options.poweredOnStart = false
        try await Fidelity.run(release, options: options) { _, client, _ in
            let good = await client.setDiscoveryFilter(["Transport": .string("le")])
            expectError(good, BlueZErrorName.notReady, BlueZErrorMessage.notReady)
            let bad = await client.setDiscoveryFilter(["Frequency": .uint16(1)])
            expectError(bad, BlueZErrorName.notReady, BlueZErrorMessage.notReady)
        }
    }
}
