import BLE
import Foundation

/// The code of the "Acting as a peripheral" article.
enum ActingAsAPeripheral {
    /// Publishes a heart-rate service and advertises it.
    static func publish(bus: Bus) async throws(BLEError) -> PeripheralManager {
        // snippet.begin publish-and-advertise
        let manager = try await PeripheralManager(bus: bus)
        try await manager.waitUntilPoweredOn(timeout: .seconds(5))
        try await manager.add(
            MutableService(
                uuid: "180D",
                characteristics: [
                    MutableCharacteristic(uuid: "2A37", properties: [.notify]),
                    MutableCharacteristic(uuid: "2A38", properties: [.read], value: Data([0x02])),  // static
                    MutableCharacteristic(
                        uuid: "2A39", properties: [.write], permissions: [.writeEncryptionRequired]),
                ]))
        try await manager.startAdvertising(Advertisement(localName: "HRM", serviceUUIDs: ["180D"]))
        // snippet.end
        return manager
    }

    /// Answers `count` requests: writes of 0x01 succeed, everything else is refused.
    static func answer(_ manager: PeripheralManager, count: Int) async -> [PeripheralRequest] {
        var answered: [PeripheralRequest] = []
        // snippet.begin answer-requests
        for await request in manager.requests {  // iterate once, on one task
            switch request.kind {
            case .write where request.value == Data([0x01]):
                request.respond()  // success
            case .write:
                request.respond(with: .application(0x80))  // the central sees ATT error 0x80
            case .read:
                request.respond(with: Data([0x00, 72]))  // the value from request.offset on
            }
            answered.append(request)
            if answered.count == count { break }
        }
        // snippet.end
        return answered
    }

    /// Notifies `count` values to the subscribers, waiting whenever the channel is full.
    static func stream(_ manager: PeripheralManager, count: Int) async throws(BLEError) {
        // snippet.begin notify-with-back-pressure
        for beat in 0..<count {
            // Suspends while the notify channel is full; never drops, never truncates.
            try await manager.updateValue(Data([0x00, UInt8(60 + beat % 60)]), for: "2A37")
        }
        // snippet.end
    }
}
