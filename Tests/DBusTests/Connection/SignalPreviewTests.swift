import DBusTestSupport
import Foundation
import Synchronization
import Testing

@testable import DBus

/// Signal handlers (`Connection.signalHandler`): signals reach the handler on the I/O thread in
/// order, and a preview takes the frequent single-property `PropertiesChanged` as received
/// (``ReceivedSignal``), leaving every other body to the handler.
@Suite struct SignalPreviewTests {
    static let widget = fixedInterface("org.example.Widget1")
    static let propertiesChanged = SignalDeliveryTests.fixedMember("PropertiesChanged")

    static func fixedInterface(_ text: String) -> InterfaceName {
        do { return try InterfaceName(text) } catch { preconditionFailure("\(error)") }
    }

    /// What the preview took and what reached the handler, in order.
    final class Log: Sendable {
        let taken = PosixMutex<[Data]>([])
        let handled = PosixMutex<[String]>([])
    }

    static func changed(_ interface: String, _ properties: [(String, DBusValue)], invalidated: [String] = [])
        -> [DBusValue]
    {
        [
            .string(interface),
            .dictionary(
                key: .string, value: .variant, properties.map { DBusDictionaryEntry(.string($0.0), .variant($0.1)) }),
            .array(.string, invalidated.map { .string($0) }),
        ]
    }

    @Test("the preview takes exactly the one-property byte-array changes from its sender; the rest reach the handler")
    func previewTakesOnlyItsShape() async throws {
        try await withConnections(3) { _, connections in
            let (emitter, listener, stranger) = (connections[0], connections[1], connections[2])
            try exportPing(on: emitter)
            let log = Log()
            let owner = emitter.uniqueName
            let subscription = try await listener.signalHandler(
                matchingAny: [MatchRule(interface: .properties)],
                preview: { signal in
                    guard signal.is(Self.propertiesChanged, of: .properties), signal.isSent(by: owner),
                        let bytes = signal.changedBytes(interface: Self.widget, property: "Value")
                    else { return false }
                    #expect(signal.path == TestNames.object)
                    log.taken.withLock { $0.append(bytes) }
                    return true
                }
            ) { message in
                let interface = (try? message.argument(0, as: String.self)) ?? "?"
                let keys: [String]
                if case .dictionary(_, _, let entries)? = message.body.dropFirst().first {
                    keys = entries.compactMap { if case .string(let key) = $0.key { key } else { nil } }
                } else {
                    keys = []
                }
                log.handled.withLock { $0.append("\(interface) \(keys.joined(separator: ","))") }
            }
            defer { subscription.cancel() }
            let member = Self.propertiesChanged
            func emit(_ from: Connection, _ body: [DBusValue]) throws {
                try from.emitSignal(path: TestNames.object, interface: .properties, member: member, arguments: body)
            }
            try emit(emitter, Self.changed("org.example.Widget1", [("Value", .bytes(Data([1, 2])))]))
            try emit(emitter, Self.changed("org.example.Widget1", [("Value", .bytes(Data()))]))
            // Not the preview's: two properties, an invalidation, another interface, another
            // type, another name, and the right shape from another sender.
            try emit(
                emitter, Self.changed("org.example.Widget1", [("Value", .bytes(Data([3]))), ("Other", .uint32(1))]))
            try emit(emitter, Self.changed("org.example.Widget1", [("Value", .bytes(Data([4])))], invalidated: ["X"]))
            try emit(emitter, Self.changed("org.example.Gadget1", [("Value", .bytes(Data([5])))]))
            try emit(emitter, Self.changed("org.example.Widget1", [("Value", .string("five"))]))
            try emit(emitter, Self.changed("org.example.Widget1", [("Level", .bytes(Data([6])))]))
            try emit(stranger, Self.changed("org.example.Widget1", [("Value", .bytes(Data([7])))]))
            try emit(emitter, Self.changed("org.example.Widget1", [("Value", .bytes(Data([8])))]))
            // The stranger's signal left before this round trip's call; the emitter's before its reply.
            try await roundTrip(from: stranger, to: emitter)
            try await roundTrip(from: listener, to: emitter)
            #expect(log.taken.withLock { $0 } == [Data([1, 2]), Data(), Data([8])])
            let handled = log.handled.withLock { $0 }
            #expect(handled.count == 6, "\(handled)")
            #expect(handled.filter { $0 == "org.example.Widget1 Value" }.count == 3, "invalidated, string, stranger")
            #expect(handled.contains("org.example.Widget1 Value,Other"))
            #expect(handled.contains("org.example.Gadget1 Value"))
            #expect(handled.contains("org.example.Widget1 Level"))
        }
    }

    @Test("InterfacesAdded decoded in place equals the decoded message, variants unwrapped once; other bodies give nil")
    func interfacesAddedInPlace() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let added = SignalDeliveryTests.fixedMember("InterfacesAdded")
            let taken = PosixMutex<[(ObjectPath, [InterfaceName: [String: DBusValue]])?]>([])
            let takenByKnown = PosixMutex<[(ObjectPath, [InterfaceName: [String: DBusValue]])?]>([])
            let handled = PosixMutex<[DBusMessage]>([])
            let subscription = try await listener.signalHandler(
                matchingAny: [MatchRule(interface: .objectManager)],
                preview: { signal in
                    guard signal.is(added, of: .objectManager) else { return false }
                    let decoded = signal.interfacesAdded()
                    taken.withLock { $0.append(decoded.map { ($0.path, $0.interfaces) }) }
                    // A name among the known ones is recognised, not rebuilt: the same result.
                    let known = signal.interfacesAdded(known: [SignalPreviewTests.widget])
                    takenByKnown.withLock { $0.append(known.map { ($0.path, $0.interfaces) }) }
                    return false
                }
            ) { message in handled.withLock { $0.append(message) } }
            defer { subscription.cancel() }
            let properties: [(String, DBusValue)] = [
                ("Name", .string("Sensor")), ("RSSI", .int16(-60)), ("UUIDs", .array(.string, [.string("180d")])),
                (
                    "ManufacturerData",
                    .dictionary(
                        key: .uint16, value: .variant,
                        [DBusDictionaryEntry(.uint16(0x6b), .variant(.bytes(Data([2, 0xc2]))))])
                ),
                ("Nested", .variant(.uint32(7))),
            ]
            let good: [DBusValue] = [
                .objectPath(TestNames.object),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [
                        DBusDictionaryEntry(
                            .string("org.example.Widget1"),
                            .dictionary(
                                key: .string, value: .variant,
                                properties.map { DBusDictionaryEntry(.string($0.0), .variant($0.1)) })),
                        DBusDictionaryEntry(
                            .string("org.example.Empty1"), .dictionary(key: .string, value: .variant, [])),
                    ]),
            ]
            let badName: [DBusValue] = [
                .objectPath(TestNames.object),
                .dictionary(
                    key: .string, value: .dictionary(key: .string, value: .variant),
                    [DBusDictionaryEntry(.string("not an interface"), .dictionary(key: .string, value: .variant, []))]),
            ]
            let otherShape: [DBusValue] = [
                .objectPath(TestNames.object), .array(.string, [.string("org.example.Widget1")]),
            ]
            for body in [good, badName, otherShape] {
                try emitter.emitSignal(
                    path: TestNames.object, interface: .objectManager, member: added, arguments: body)
            }
            try await roundTrip(from: listener, to: emitter)
            let results = taken.withLock { $0 }
            #expect(results.count == 3)
            let first = try #require(results.first ?? nil)
            #expect(first.0 == TestNames.object)
            #expect(first.1[SignalPreviewTests.fixedInterface("org.example.Empty1")] == [:])
            let widget = try #require(first.1[SignalPreviewTests.widget])
            #expect(widget == Dictionary(uniqueKeysWithValues: properties))
            #expect(results.dropFirst().allSatisfy { $0 == nil })
            let byKnown = takenByKnown.withLock { $0 }
            #expect(byKnown.count == 3)
            #expect(byKnown.first??.1 == first.1)
            #expect(byKnown.dropFirst().allSatisfy { $0 == nil }, "a bad name is still refused")
            #expect(handled.withLock { $0.count } == 3, "the preview took none")
        }
    }

    @Test("PropertiesChanged decoded in place equals the decoded message; other bodies and bad names give nil")
    func propertiesChangedInPlace() async throws {
        typealias Change = (interface: InterfaceName, changed: [String: DBusValue], invalidated: [String])
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let taken = PosixMutex<[Change?]>([])
            let takenByKnown = PosixMutex<[Change?]>([])
            let handled = PosixMutex<[DBusMessage]>([])
            let subscription = try await listener.signalHandler(
                matchingAny: [MatchRule(interface: .properties)],
                preview: { signal in
                    guard signal.is(SignalPreviewTests.propertiesChanged, of: .properties) else { return false }
                    taken.withLock { $0.append(signal.propertiesChanged()) }
                    takenByKnown.withLock { $0.append(signal.propertiesChanged(known: [SignalPreviewTests.widget])) }
                    return false
                }
            ) { message in handled.withLock { $0.append(message) } }
            defer { subscription.cancel() }
            let properties: [(String, DBusValue)] = [
                ("Connected", .boolean(true)), ("ServicesResolved", .boolean(true)), ("RSSI", .int16(-61)),
                ("UUIDs", .array(.string, [.string("180d")])), ("Nested", .variant(.uint32(7))),
            ]
            let good = Self.changed("org.example.Widget1", properties, invalidated: ["TxPower", "ManufacturerData"])
            let other = Self.changed("org.example.Other1", [], invalidated: ["RSSI"])
            let badName = Self.changed("not an interface", [("RSSI", .int16(-1))])
            let otherShape: [DBusValue] = [.string("org.example.Widget1"), .array(.string, [])]
            for body in [good, other, badName, otherShape] {
                try emitter.emitSignal(
                    path: TestNames.object, interface: .properties, member: Self.propertiesChanged, arguments: body)
            }
            try await roundTrip(from: listener, to: emitter)
            for results in [taken.withLock { $0 }, takenByKnown.withLock { $0 }] {
                #expect(results.count == 4)
                let first = try #require(results.first ?? nil)
                #expect(first.interface == SignalPreviewTests.widget)
                #expect(first.changed == Dictionary(uniqueKeysWithValues: properties))
                #expect(first.invalidated == ["TxPower", "ManufacturerData"])
                let second = try #require(results.dropFirst().first ?? nil)
                #expect(second.interface == SignalPreviewTests.fixedInterface("org.example.Other1"))
                #expect(second.changed.isEmpty && second.invalidated == ["RSSI"])
                #expect(results.dropFirst(2).allSatisfy { $0 == nil }, "a bad name or another shape gives nil")
            }
            #expect(handled.withLock { $0.count } == 4, "the preview took none")
        }
    }
}
