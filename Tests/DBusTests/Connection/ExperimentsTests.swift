import DBusTestSupport
import Foundation
import Testing

@testable import DBus

@Suite struct ExperimentsTests {
    @Test func arg0ObjectPath() async throws {
        try await withConnections(2) { _, connections in
            let (emitter, listener) = (connections[0], connections[1])
            try exportPing(on: emitter)
            let alone = SignalReader(
                try await listener.signals(matching: MatchRule(interface: TestNames.interface, arguments: [0: "/yes"])))
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: try member("Hit"),
                arguments: [.objectPath(try path("/yes"))])
            try emitter.emitSignal(
                path: TestNames.object, interface: TestNames.interface, member: try member("Hit"),
                arguments: [.string("/yes")])
            try await roundTrip(from: listener, to: emitter)
            let got = await alone.cancelAndDrain()
            print("EXP arg0 alone:", got.map(\.body))
        }
    }

    @Test func unrequestedReply() async throws {
        try await withConnections(2) { _, connections in
            let (service, client) = (connections[0], connections[1])
            try exportPing(on: service)
            try service.send(DBusMessage(kind: .methodReturn, destination: client.uniqueName, replySerial: 4242, body: [.int32(1)]))
            try await roundTrip(from: client, to: service)
            _ = try await service.listNames()
            print("EXP unrequested: client", client.counters.repliesIgnoredCount, "service", service.counters.repliesIgnoredCount)
        }
    }

    @Test func disconnectMidCall() async throws {
        try await withConnections(2) { bus, connections in
            let (service, client) = (connections[0], connections[1])
            let gate = Gate()
            let entered = EventLog<Int>()
            defer { gate.open() }
            try service.export(
                [ExportedInterface(TestNames.interface, methods: [ExportedMethod(try member("Slow")) { _ in entered.record(1); await gate.wait(); return [] }])],
                at: TestNames.object)
            let task = Task {
                try await client.call(destination: service.uniqueName, path: TestNames.object, interface: TestNames.interface, member: try member("Slow"), timeout: .seconds(60))
            }
            print("EXP waiting entered")
            let e = await entered.waitFor(1)
            print("EXP entered", e as Any)
            bus.stop()
            print("EXP stopped")
            let result = await task.result
            print("EXP disconnect:", result)
        }
    }

    @Test(arguments: [40, 70, 200])
    func deepVariant(_ depth: Int) async throws {
        try await withConnections(2) { _, connections in
            let (service, client) = (connections[0], connections[1])
            try service.export(
                [ExportedInterface(TestNames.interface, methods: [.immediate(try member("Echo"), in: try signature("v"), out: try signature("v")) { call in call.body }])],
                at: TestNames.object)
            var value = DBusValue.int32(1)
            for _ in 0..<depth { value = .variant(value) }
            do {
                let reply = try await client.call(destination: service.uniqueName, path: TestNames.object, interface: TestNames.interface, member: try member("Echo"), arguments: [value], timeout: .seconds(5))
                print("EXP deep variant \(depth): ok \(reply.body == [value])")
            } catch {
                print("EXP deep variant \(depth): \(error)")
            }
            print("EXP closed", client.isClosed)
        }
    }
}
