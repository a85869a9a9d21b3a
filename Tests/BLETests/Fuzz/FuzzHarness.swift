import BlueZ
import Foundation

@testable import BLE
@testable import DBus

/// One fuzz input through every decoder of data from outside the process: D-Bus messages from
/// the wire, BlueZ's object-manager replies and signals, each interface's typed properties,
/// and the advertisement and GATT values the SDK derives from them.
///
/// Bad input must only ever be a thrown error or an ignored value. The invariants checked here
/// trap when broken, which is how libFuzzer (`make fuzz`) reports them; the regression test
/// replays the corpus through the same code.
enum FuzzHarness {
    /// The first byte picks the mode: even for a wire message, odd for a property recipe.
    static func run(_ bytes: [UInt8]) {
        guard let mode = bytes.first else { return }
        let rest = Array(bytes.dropFirst())
        if mode & 1 == 0 { wire(rest) } else { properties(rest) }
    }

    static func wire(_ bytes: [UInt8]) {
        // The wire reader reads what libdbus's iterators read (or leaves the body to them).
        precondition(WireDecoder.agreesWithIterators(onWire: bytes) != false, "the wire reader disagrees: \(bytes)")
        // A value change (notification, read echo) is told apart as the whole decoding tells it.
        precondition(
            ReceivedSignal.valueReadingAgrees(onWire: bytes) != false, "the value reading disagrees: \(bytes)")
        guard let message = try? DBusMessage(wireFormat: bytes) else { return }
        // What decodes encodes again, to the same values (compared as text: NaN is not == NaN).
        if let again = try? message.wireFormat() {
            let decoded = try? DBusMessage(wireFormat: again)
            precondition(
                decoded.map { "\($0.body)" } == "\(message.body)", "wire round trip changed \(message.body)")
        }
        var tree = BlueZObjectTree()
        if let event = try? ObjectTreeEvent(managedObjectsReply: message) { _ = tree.apply(event) }
        if let event = (try? ObjectTreeEvent(signal: message)) ?? nil { _ = tree.apply(event) }
        for path in tree.descendants(of: .root) + [.root] { inspect(tree, at: path) }
    }

    static func properties(_ bytes: [UInt8]) {
        var recipe = FuzzRecipe(bytes)
        let properties = recipe.properties()
        let changed = recipe.properties()
        let invalidated = (0..<Int(recipe.byte() % 4)).map { _ in recipe.propertyName() }
        check(AdapterProperties.self, properties, changed, invalidated)
        check(DeviceProperties.self, properties, changed, invalidated)
        check(GattServiceProperties.self, properties, changed, invalidated)
        check(GattCharacteristicProperties.self, properties, changed, invalidated)
        check(GattDescriptorProperties.self, properties, changed, invalidated)
        check(BatteryProperties.self, properties, changed, invalidated)
        check(LEAdvertisingManagerProperties.self, properties, changed, invalidated)
        check(LEAdvertisementProperties.self, properties, changed, invalidated)
        check(GattManagerProperties.self, properties, changed, invalidated)
        check(AgentManagerProperties.self, properties, changed, invalidated)
        if let device = try? DeviceAdvertisement(properties: properties) { derive(device) }
        if let text = properties.values.first.flatMap({ if case .string(let s) = $0 { s } else { nil } }) {
            _ = BluetoothUUID(validating: text)
            _ = try? BluetoothAddress(text)
            _ = try? PeripheralID(text)
        }
    }

    /// Decodes `P`; what decodes survives its own encoding, and a change applies or throws
    /// without touching the value.
    private static func check<P: BlueZInterfaceProperties>(
        _ type: P.Type, _ properties: [String: DBusValue], _ changed: [String: DBusValue], _ invalidated: [String]
    ) {
        guard var decoded = try? P(properties: properties) else { return }
        let again = try? P(properties: decoded.dbusProperties)
        precondition(again == decoded, "\(P.self) does not survive its own encoding: \(properties)")
        let before = decoded
        do {
            try decoded.apply(changed: changed, invalidated: invalidated)
        } catch {
            precondition(decoded == before, "\(P.self).apply changed the value although it threw")
        }
    }

    private static func inspect(_ tree: BlueZObjectTree, at path: ObjectPath) {
        _ = try? tree.adapter(at: path)
        _ = try? tree.device(at: path)
        if let device = (try? tree.advertisement(at: path)) ?? nil { derive(device) }
        _ = try? tree.service(at: path)
        if let characteristic = (try? tree.characteristic(at: path)) ?? nil {
            _ = CharacteristicProperties(flags: characteristic.flags.strings)
            _ = BluetoothUUID(characteristic.uuid)
        }
        _ = try? tree.descriptor(at: path)
        _ = try? tree.battery(at: path)
        _ = try? tree.advertisingManager(at: path)
        _ = BlueZPath.serviceHandle(of: path)
        _ = BlueZPath.characteristicHandle(of: path)
        _ = BlueZPath.descriptorHandle(of: path)
    }

    /// What scanning reports for a device.
    private static func derive(_ device: DeviceAdvertisement) {
        let advertisement = AdvertisementData(device)
        _ = advertisement.serviceUUIDs.map(\.uuidString)
        _ = PeripheralID(adapter: "hci0", bluetoothAddress: device.address)
    }
}
