import BLE
import BLESimulator
import Foundation
import Testing

/// The example in ``PeripheralManager``'s doc comment, run as written against the simulator
/// (only the bus differs), with a remote central playing the other side.
@Suite("PeripheralManager: documented example")
struct PeripheralManagerExampleTests {
    @Test("The doc-comment example runs: publish, advertise, answer a write, notify a subscriber")
    func docExample() async throws {
        try await SimulatorFixture.run(peripherals: []) { fixture in
            let simulator = fixture.simulator
            let notifications = simulator.notifications(for: "2A37")
            let centralSide = Task {
                while simulator.advertisements.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
                try await simulator.remoteWrite(Data([0x01]), to: "2A39")
                let refused = await #expect(throws: RemoteCentralError.self) {
                    try await simulator.remoteWrite(Data([0x02]), to: "2A39")
                }
                #expect(refused?.attError == 0x03)
                #expect(try await simulator.remoteRead(characteristic: "2A38") == Data([0x01]))
                try await simulator.remoteSubscribe(to: "2A37")
            }

            // The example, with the bus of the fixture.
            let manager = try await PeripheralManager(bus: .address(fixture.bus.address))
            try await manager.waitUntilPoweredOn(timeout: .seconds(5))
            let events = manager.events
            try await manager.add(
                MutableService(
                    uuid: "180D",
                    characteristics: [
                        MutableCharacteristic(uuid: "2A37", properties: [.notify]),
                        MutableCharacteristic(uuid: "2A38", properties: [.read], value: Data([0x01])),
                        MutableCharacteristic(uuid: "2A39", properties: [.write]),
                    ]))
            try await manager.startAdvertising(Advertisement(localName: "HRM", serviceUUIDs: ["180D"]))
            let answering = Task {
                for await request in manager.requests {
                    if request.kind == .write, request.value == Data([0x01]) {
                        request.respond()
                    } else {
                        request.respond(with: .writeNotPermitted)
                    }
                }
            }
            // Not in the example: a failing central side must not leave the loop waiting forever.
            // It closes the manager once the central side has failed, not after a fixed time: the
            // whole suite under ThreadSanitizer took longer than that to subscribe.
            let watchdog = Task {
                if case .failure = await centralSide.result { await manager.close() }
            }
            defer { watchdog.cancel() }
            var sent = false
            for await event in events {
                guard case .subscribed(characteristic: "2A37", _) = event else { continue }
                try await manager.updateValue(Data([0x00, 72]), for: "2A37")
                sent = true
                break
            }
            // Received before the manager closes, as an app would wait for it: bluetoothd drops
            // what an application's notify socket still holds when the application unregisters
            // (the simulator too), so a value sent just before `close()` may never arrive. The
            // bound only ends a failing run.
            let notification = sent ? try await nextNotification(notifications, within: .seconds(60)) : nil
            await manager.close()
            await answering.value

            try await centralSide.value
            #expect(sent, "the remote central's subscription never reached the manager")
            #expect(notification?.value == Data([0x00, 72]))
            #expect(simulator.registeredApplications.isEmpty)
            #expect(simulator.advertisements.isEmpty)
        }
    }
}
