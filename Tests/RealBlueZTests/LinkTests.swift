import BLE
import Foundation
import Testing

extension AgainstBluetoothd {
    /// The link going down: at the app's request, and from the peripheral's side under a
    /// reconnect policy.
    @Suite("Disconnect and reconnect")
    struct LinkTests {
        @Test("disconnect() ends the link and says so in the events")
        func disconnect() async throws {
            try await Stage.run { stage in
                let (central, peripheral) = try await stage.connected()
                let events = peripheral.events
                try await peripheral.disconnect()
                let event = try await within(.seconds(20), "a disconnected event") {
                    for await event in events {
                        if case .disconnected = event { return event }
                    }
                    throw StageError(description: "the event stream ended")
                }
                #expect(event == .disconnected(.local))
                #expect(await peripheral.state == .disconnected)
                await central.close()
            }
        }

        @Test("a link the peripheral drops is reconnected under a policy; the subscription carries on")
        func reconnectAfterPeripheralDrop() async throws {
            let policy: (inout CentralOptions) -> Void = { options in
                options.reconnectPolicy = .exponentialBackoff(
                    initial: .milliseconds(200), maximum: .seconds(2), jitter: 0, maximumAttempts: 10)
                options.connectTimeout = .seconds(30)
            }
            try await Stage.runConnected(policy) { stage, peripheral in
                let uuid = TestPeripheralLayout.notifying
                let characteristic = try await stage.characteristic(uuid, of: peripheral)
                let notifications = try await characteristic.subscribe()
                let limitBefore = await peripheral.maximumWriteLength(for: .withoutResponse)
                let events = peripheral.events
                let sequence = Task {
                    var seen: [ConnectionEvent] = []
                    for await event in events {
                        seen.append(event)
                        if event == .connected { break }
                    }
                    return seen
                }
                defer { sequence.cancel() }
                try await stage.driver.dropLink()
                let seen = try await within(.seconds(90), "disconnected, reconnecting, connected") {
                    await sequence.value
                }
                guard case .disconnected = seen.first else {
                    Issue.record("the first event was not disconnected: \(seen)")
                    return
                }
                #expect(seen.contains(.reconnecting(attempt: 1, after: .milliseconds(200))))
                #expect(seen.last == .connected)
                #expect(await peripheral.isConnected)

                try await stage.driver.waitUntilSubscribed(uuid)
                let value = Data("after the reconnect".utf8)
                try await stage.driver.send([value], from: uuid)
                let received = try await within(.seconds(20), "a notification after the reconnect") {
                    for await received in notifications { return received }
                    throw StageError(description: "the notifications ended")
                }
                #expect(received == value)
                // The reconnection made no MTU read; the first use of the limit reads this link's.
                #expect(await peripheral.maximumWriteLength(for: .withoutResponse) == limitBefore)
                #expect(limitBefore > 20, "bluetoothd reported an exchanged MTU")
            }
        }
    }
}
