import BLESimulator
import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

/// Faults on a bridged peripheral (an application on hci1, its central on hci0) act as on a
/// virtual peripheral: a delay holds the request before it reaches the application (link
/// loss fails it meanwhile), a failure answers it without the application hearing of it.
@Suite("Server: faults on forwarded GATT operations")
struct AdapterBridgeFaultTests {
    private static let noOptions = DBusValue.dictionary(key: .string, value: .variant, [])
    /// Longer than any test: the request stays held until the link drops.
    private static let holding = SimulatedFault.Action.delay(.seconds(120))
    private static let linkLostMessage = BlueZErrorMessage.attError(0x0e)

    private static func fault(_ operation: SimulatedFault.Operation, _ uuid: String, _ action: SimulatedFault.Action)
        -> SimulatedFault
    {
        SimulatedFault(operation, address: AdapterBridgeTests.peripheralAddress, characteristic: uuid, action: action)
    }

    /// Starts `member` on hci0's characteristic `uuid` under a holding delay, checks that the
    /// application has not heard of it, drops the link, and expects the call to fail as link loss.
    private static func heldUntilTheLinkDrops(
        _ operation: SimulatedFault.Operation, _ uuid: String, _ member: String, _ arguments: [DBusValue],
        appPath: (TestApplication) throws -> ObjectPath, appMember: String
    ) async throws {
        try await AdapterBridgeTests.run { simulator, app, client in
            try await AdapterBridgeTests.connect(client)
            let target = try await AdapterBridgeTests.characteristic(client, uuid)
            simulator.inject(fault(operation, uuid, holding))
            let pending = try await client.startPending(target, BlueZInterface.gattCharacteristic1, member, arguments)
            try await client.settle()
            #expect(app.log.calls(appMember, path: try appPath(app)).isEmpty, "held before the application")
            try simulator.dropLink(address: AdapterBridgeTests.peripheralAddress)
            guard case .failure(let error) = await pending.value else {
                Issue.record("\(member) succeeded across a dropped link")
                return
            }
            expectError(error, BlueZErrorName.failed, linkLostMessage)
            #expect(app.log.calls(appMember, path: try appPath(app)).isEmpty, "never forwarded")
        }
    }

    @Test("a delayed read is held before the application; the link dropping fails it")
    func delayedReadHeldUntilLinkLoss() async throws {
        try await Self.heldUntilTheLinkDrops(
            .read, "2A37", "ReadValue", [Self.noOptions], appPath: { $0.path("service0", "char0") },
            appMember: "ReadValue")
    }

    @Test("a delayed write request is held before the application; the link dropping fails it")
    func delayedWriteHeldUntilLinkLoss() async throws {
        try await Self.heldUntilTheLinkDrops(
            .write, "2A39", "WriteValue", [.bytes(Data([7])), Self.noOptions],
            appPath: { $0.path("service0", "char1") }, appMember: "WriteValue")
    }

    @Test("a delayed StartNotify is held before the application; the link dropping fails it")
    func delayedStartNotifyHeldUntilLinkLoss() async throws {
        try await Self.heldUntilTheLinkDrops(
            .startNotify, "2A37", "StartNotify", [], appPath: { $0.path("service0", "char0") },
            appMember: "StartNotify")
    }

    @Test("delayed read, write, command and StartNotify go through once the delay ran out")
    func delayedOperationsComplete() async throws {
        try await AdapterBridgeTests.run { simulator, app, client in
            try await AdapterBridgeTests.connect(client)
            let short = SimulatedFault.Action.delay(.milliseconds(200))
            for (operation, uuid) in [
                (SimulatedFault.Operation.read, "2A37"), (.write, "2A39"), (.write, "2A19"), (.startNotify, "2A37"),
            ] {
                simulator.inject(Self.fault(operation, uuid, short))
            }
            let rate = try await AdapterBridgeTests.characteristic(client, "2A37")
            let read = try await client.call(rate, BlueZInterface.gattCharacteristic1, "ReadValue", [Self.noOptions])
            #expect(read == [.bytes(Data([0x2A]))])
            let control = try await AdapterBridgeTests.characteristic(client, "2A39")
            try await client.call(
                control, BlueZInterface.gattCharacteristic1, "WriteValue", [.bytes(Data([3])), Self.noOptions])
            #expect(
                app.log.calls("WriteValue", path: app.path("service0", "char1")).first?.body.first == .bytes(Data([3])))
            let level = try await AdapterBridgeTests.characteristic(client, "2A19")
            try await client.call(
                level, BlueZInterface.gattCharacteristic1, "WriteValue", [.bytes(Data([9])), Self.noOptions])
            let command = try await app.log.wait(for: "WriteValue", path: app.path("service1", "char0"))
            #expect(command.first?.body.first == .bytes(Data([9])))
            try await client.call(rate, BlueZInterface.gattCharacteristic1, "StartNotify")
            #expect(!app.log.calls("StartNotify", path: app.path("service0", "char0")).isEmpty)
        }
    }

    @Test("failures answer the central; the application never hears of the request")
    func failuresAreNotForwarded() async throws {
        try await AdapterBridgeTests.run { simulator, app, client in
            try await AdapterBridgeTests.connect(client)
            simulator.inject(Self.fault(.read, "2A37", .attError(0x05)))
            simulator.inject(
                Self.fault(
                    .write, "2A39", .fail(name: BlueZErrorName.inProgress, message: BlueZErrorMessage.inProgress)))
            let rate = try await AdapterBridgeTests.characteristic(client, "2A37")
            let read = await client.error(rate, BlueZInterface.gattCharacteristic1, "ReadValue", [Self.noOptions])
            #expect(read?.name == ATTErrorMapping.clientError(forATTError: 0x05).name)
            let control = try await AdapterBridgeTests.characteristic(client, "2A39")
            let write = await client.error(
                control, BlueZInterface.gattCharacteristic1, "WriteValue", [.bytes(Data([1])), Self.noOptions])
            expectError(write, BlueZErrorName.inProgress, BlueZErrorMessage.inProgress)
            try await client.settle()
            #expect(app.log.calls("ReadValue", path: app.path("service0", "char0")).isEmpty)
            #expect(app.log.calls("WriteValue", path: app.path("service0", "char1")).isEmpty)
        }
    }
}
