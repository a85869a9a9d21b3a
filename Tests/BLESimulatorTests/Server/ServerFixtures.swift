import BLESimulator
import BlueZ
import DBus
import Foundation

/// The GATT trees the server tests export.
enum ServerFixtures {
    /// Heart Rate: a notify characteristic with a user descriptor, a write-only one and an
    /// indicate one; `Handle` exported as 0 where a test checks the write-back.
    static let heartRate = AppService(
        name: "service0", uuid: "180D",
        characteristics: [
            AppCharacteristic(
                name: "char0", uuid: "2A37", flags: ["read", "notify"], handle: 0,
                descriptors: [AppDescriptor(name: "desc0", uuid: "2901", flags: ["read", "write"], handle: 0)]),
            AppCharacteristic(name: "char1", uuid: "2A39", flags: ["write"], handle: 0),
            AppCharacteristic(name: "char2", uuid: "2A38", flags: ["read", "indicate"]),
        ])

    /// Battery: a write-without-response characteristic, the service's handle exported.
    static let battery = AppService(
        name: "service1", uuid: "180F", handle: 0,
        characteristics: [AppCharacteristic(name: "char0", uuid: "2A19", flags: ["read", "write-without-response"])])

    /// A vendor service whose characteristics use AcquireNotify / AcquireWrite.
    static let acquired = AppService(
        name: "service2", uuid: "12345678-1234-5678-1234-56789abcdef0",
        characteristics: [
            AppCharacteristic(
                name: "char0", uuid: "12345678-1234-5678-1234-56789abcdef1", flags: ["notify", "indicate"],
                notifyAcquired: true),
            AppCharacteristic(
                name: "char1", uuid: "12345678-1234-5678-1234-56789abcdef2", flags: ["write-without-response"],
                writeAcquired: true),
        ])

    /// A typical peripheral advertisement, with exact D-Bus types.
    static let advertisement: [String: DBusValue] = [
        "Type": .string("peripheral"),
        "ServiceUUIDs": .array(.string, [.string("180D")]),
        "ManufacturerData": .dictionary(
            key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(Data([1, 2, 3]))))]),
        "ServiceData": .dictionary(
            key: .string, value: .variant, [DBusDictionaryEntry(.string("180D"), .variant(.bytes(Data([9]))))]),
        "LocalName": .string("swift-ble"),
        "Includes": .array(.string, [.string("tx-power")]),
        "Appearance": .uint16(0x0341),
        "Discoverable": .boolean(true),
    ]
}
