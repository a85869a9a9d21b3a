import BLE
import Foundation
import Testing

extension AgainstBluetoothd {
    /// The peripheral role: our ``PeripheralManager`` on hci1 publishes a GATT server and
    /// advertises it; our ``Central`` on hci0 finds it, reads, writes and subscribes, and the
    /// manager sees each request and subscription. Both halves of the SDK, through the daemon.
    @Suite("Our PeripheralManager as the peripheral")
    struct OwnPeripheralTests {
        typealias Layout = OwnPeripheralLayout

        @Test("a scan for the manager's service finds it with its name and service")
        func scan() async throws {
            try await Stage.runOwn { stage, own in
                #expect(await own.manager.isAdvertising)
                let central = try await stage.central()
                let id = own.id
                let scan = central.scan(services: [Layout.service])
                let discovery = try await within(.seconds(30), "a scan finding \(id)") {
                    for try await discovery in scan where discovery.id == id { return discovery }
                    throw StageError(description: "the scan ended")
                }
                #expect(discovery.advertisement.serviceUUIDs.contains(Layout.service))
                #expect(discovery.name == Layout.localName)
                await central.close()
            }
        }

        @Test("connect and discovery list the published characteristics with their properties")
        func connectAndDiscover() async throws {
            try await Stage.runOwnConnected { stage, _, peripheral in
                let services = try await peripheral.discoverServices([Layout.service])
                let service = try #require(services.first)
                #expect(services.count == 1)
                #expect(service.isPrimary)
                for (uuid, properties) in Layout.characteristics {
                    let characteristic = try await stage.characteristic(uuid, of: peripheral)
                    #expect(characteristic.properties == properties, "\(uuid)")
                }
            }
        }

        @Test("a read is answered by the manager's request handler, which sees the central")
        func read() async throws {
            try await Stage.runOwnConnected { stage, own, peripheral in
                let characteristic = try await stage.characteristic(Layout.readWrite, of: peripheral)
                #expect(try await characteristic.read() == Layout.initialValue)
                let request = try #require(own.seen.requests.last)
                #expect(request.kind == .read)
                #expect(request.characteristic == Layout.readWrite)
                #expect(request.central == own.central)
            }
        }

        @Test("a write with response reaches the manager as a request before it returns")
        func writeWithResponse() async throws {
            try await Stage.runOwnConnected { stage, own, peripheral in
                let characteristic = try await stage.characteristic(Layout.readWrite, of: peripheral)
                let value = Data("written to the manager".utf8)
                try await characteristic.write(value, type: .withResponse)
                let request = try #require(own.seen.requests.last)
                #expect(request.kind == .write)
                #expect(request.writeType == .request)
                #expect(request.value == value)
                #expect(try await characteristic.read() == value)
            }
        }

        @Test("writes without response reach the manager as commands, in order")
        func writeWithoutResponse() async throws {
            try await Stage.runOwnConnected { stage, own, peripheral in
                let characteristic = try await stage.characteristic(Layout.writeWithoutResponse, of: peripheral)
                let values = (0..<20).map { Data("command \($0)".utf8) }
                for value in values { try await characteristic.write(value, type: .withoutResponse) }
                try await stage.waitForValue(try #require(values.last), in: Layout.writeWithoutResponse)
                let writes = own.seen.requests.filter { $0.characteristic == Layout.writeWithoutResponse }
                #expect(writes.map(\.value) == values)
                #expect(writes.allSatisfy { $0.writeType == .command })
            }
        }

        /// Connects, subscribes to `uuid` (through AcquireNotify when `acquired`), has the
        /// manager send `count` numbered values and expects exactly them, in order; `check`
        /// then looks at what the manager saw.
        static func expectInOrder(
            _ uuid: BluetoothUUID, count: Int, acquired: Bool = false,
            _ check: @escaping @Sendable (OwnPeripheral) -> Void = { _ in }
        ) async throws {
            try await Stage.runOwnConnected { stage, own, peripheral in
                let characteristic = try await stage.characteristic(uuid, of: peripheral)
                let values = NotificationTests.numbered(count)
                let received = try await NotificationTests.roundTrip(stage, uuid, values) {
                    acquired ? characteristic.acquiredNotifications : try await characteristic.subscribe()
                }
                #expect(received == values)
                check(own)
            }
        }

        @Test("200 notifications from the manager arrive complete and in order")
        func notificationsInOrder() async throws {
            try await Self.expectInOrder(Layout.notifying, count: 200) { own in
                // The notify channel (AcquireNotify) names the central.
                #expect(
                    own.seen.subscribed.contains { $0.characteristic == Layout.notifying && $0.central == own.central })
            }
        }

        @Test("notifications from the manager over AcquireNotify (fd passing) arrive complete and in order")
        func acquiredNotifications() async throws {
            try await Self.expectInOrder(Layout.notifying, count: 50, acquired: true)
        }

        @Test("a write channel (AcquireWrite, fd passing) carries commands to the manager in order")
        func writeChannel() async throws {
            try await Stage.runOwnConnected { stage, own, peripheral in
                let channel = try await stage.characteristic(Layout.writeWithoutResponse, of: peripheral)
                    .openWriteChannel()
                defer { channel.close() }
                let values = (0..<20).map { Data("datagram \($0)".utf8) }
                for value in values { try await channel.write(value) }
                try await stage.waitForValue(try #require(values.last), in: Layout.writeWithoutResponse)
                let writes = own.seen.requests.filter { $0.characteristic == Layout.writeWithoutResponse }
                #expect(writes.map(\.value) == values)
            }
        }

        @Test("indications from the manager arrive in order, each confirmed to the manager")
        func indicationsInOrder() async throws {
            try await Self.expectInOrder(Layout.indicating, count: 20) { own in
                #expect(own.seen.subscribed.contains { $0.characteristic == Layout.indicating })
                #expect(own.seen.confirmations[Layout.indicating] == 20)
            }
        }

        @Test("a link the peripheral's side drops ends at the central")
        func droppedByPeripheral() async throws {
            try await Stage.runOwn { stage, own in
                let (central, peripheral) = try await stage.connected()
                let events = peripheral.events
                try await own.dropLink()
                let event = try await within(.seconds(30), "a disconnected event") {
                    for await event in events {
                        if case .disconnected = event { return event }
                    }
                    throw StageError(description: "the event stream ended")
                }
                #expect(event != .disconnected(.local))
                #expect(await !peripheral.isConnected)
                await central.close()
            }
        }

        @Test("the central disconnecting ends its subscription at the manager")
        func unsubscribedOnDisconnect() async throws {
            try await Stage.runOwn { stage, own in
                let (central, peripheral) = try await stage.connected()
                let characteristic = try await stage.characteristic(Layout.notifying, of: peripheral)
                // Kept until the disconnect: a sequence let go unsubscribes by itself.
                let notifications = try await characteristic.subscribe()
                try await own.waitUntilSubscribed(Layout.notifying)
                try await peripheral.disconnect()
                await central.close()
                withExtendedLifetime(notifications) {}
                // The event is what comes last: the manager's state changes before it yields
                // the event, which the test's own task then logs (waiting for the state alone
                // failed under load, the log not written yet).
                try await waitUntil("the manager telling that the central left") {
                    own.seen.unsubscribed.contains(Layout.notifying)
                }
                #expect(await !own.manager.isNotifying(Layout.notifying))
            }
        }

        @Test("bluetoothd 5.66 has no scan-response properties: the manager refuses them instead of losing them")
        func scanResponseRefused() async throws {
            try await Stage.runOwn { _, own in
                let refusal = await #expect(throws: BLEError.self) {
                    _ = try await own.manager.addAdvertisement(
                        Advertisement(scanResponse: ScanResponse(data: [0x24: Data([0x16, 0x2F, 0x2F])])))
                }
                #expect(refusal?.code == .notSupported, "\(String(describing: refusal))")
                #expect(await own.manager.isAdvertising, "the running advertisement is untouched")
            }
        }
    }
}
