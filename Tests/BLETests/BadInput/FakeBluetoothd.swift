import BLE
import BlueZ
import DBus
import DBusTestSupport
import Foundation

/// A hand-made "bluetoothd": a plain D-Bus peer that owns `org.bluez` on a test bus and
/// exports exactly the objects a test gives it (wrong types, huge values, unknown flags),
/// answering calls however the test says. The simulator is faithful; this one is not.
struct FakeBluetoothd: Sendable {
    let bus: TestBus
    let connection: Connection
    /// Centrals made through ``central()``, checked for leftovers at the end.
    let ledger = CentralLedger()

    static let adapter = "/org/bluez/hci0"
    static let address = "C4:7C:8D:6A:11:22"
    static let device = "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"
    static let service = device + "/service000a"
    static let characteristic = service + "/char000b"

    /// Runs `body` with a fake on a fresh bus; `body` exports its objects, then calls
    /// ``takeName()`` so that a central's first read sees them.
    static func run<R: Sendable>(_ body: (FakeBluetoothd) async throws -> R) async throws -> R {
        let bus = try TestBus()
        defer { bus.stop() }
        let connection = try await bus.connect()
        defer { connection.close() }
        connection.addObjectManager(at: .root)
        let fake = FakeBluetoothd(bus: bus, connection: connection)
        let result = try await body(fake)
        await fake.ledger.expectNothingOutstanding()
        return result
    }

    /// Takes `org.bluez`: from now on the fake is bluetoothd.
    func takeName() async throws { try await connection.requestName(BlueZService.busName) }

    /// A central on the fake's bus, checked for leftovers like the simulator fixture's.
    func central() async throws -> Central {
        ledger.track(try await Central(bus: .address(bus.address), adapter: "hci0"))
    }

    func export(
        _ path: String, _ interface: InterfaceName, _ properties: [String: DBusValue], methods: [ExportedMethod] = []
    ) throws {
        let exported = properties.map { ExportedProperty($0.key, value: $0.value, access: .readwrite) }
        try connection.export(
            [ExportedInterface(interface, methods: methods, properties: exported)], at: try ObjectPath(path))
    }

    func remove(_ path: String) throws { connection.unexport(try ObjectPath(path)) }

    /// Sends `PropertiesChanged` as given, whatever the exported types say.
    func propertiesChanged(_ path: String, _ interface: InterfaceName, _ changed: [String: DBusValue]) throws {
        try connection.emitSignal(
            path: try ObjectPath(path), interface: .properties, member: try MemberName("PropertiesChanged"),
            arguments: [
                .string(interface.rawValue),
                .dictionary(
                    key: .string, value: .variant,
                    changed.map { DBusDictionaryEntry(.string($0.key), .variant($0.value)) }),
                .array(.string, []),
            ])
    }

    // MARK: Well-formed objects, for tests to spoil

    static func adapterProperties() -> [String: DBusValue] {
        [
            "Address": .string("00:AA:BB:CC:DD:EE"), "AddressType": .string("public"), "Name": .string("fake"),
            "Alias": .string("fake"), "Class": .uint32(0), "Powered": .boolean(true), "Discoverable": .boolean(false),
            "DiscoverableTimeout": .uint32(180), "Pairable": .boolean(true), "PairableTimeout": .uint32(0),
            "Discovering": .boolean(false), "UUIDs": .array(.string, []),
            "Roles": .array(.string, [.string("central")]),
        ]
    }

    static func deviceProperties(connected: Bool = false) -> [String: DBusValue] {
        [
            "Address": .string(address), "AddressType": .string("public"), "Alias": .string("Fake"),
            "Name": .string("Fake"), "Paired": .boolean(false), "Trusted": .boolean(false), "Blocked": .boolean(false),
            "LegacyPairing": .boolean(false), "Connected": .boolean(connected), "UUIDs": .array(.string, []),
            "Adapter": .objectPath(knownPath(adapter)), "ServicesResolved": .boolean(connected),
            "RSSI": .int16(-50),
        ]
    }

    static func serviceProperties() -> [String: DBusValue] {
        [
            "UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Primary": .boolean(true),
            "Device": .objectPath(knownPath(device)),
        ]
    }

    static func characteristicProperties(flags: [String] = ["read"]) -> [String: DBusValue] {
        [
            "UUID": .string("00002a38-0000-1000-8000-00805f9b34fb"),
            "Service": .objectPath(knownPath(service)), "Flags": .array(.string, flags.map { .string($0) }),
        ]
    }

    /// Adapter, a connected device with one service and one characteristic.
    func exportConnectedPeripheral(
        device: [String: DBusValue] = deviceProperties(connected: true),
        characteristic: [String: DBusValue] = characteristicProperties(), methods: [ExportedMethod] = []
    ) throws {
        try export(Self.adapter, BlueZInterface.adapter1, Self.adapterProperties())
        try export(
            Self.device, BlueZInterface.device1, device,
            methods: [
                .immediate(BlueZMethod.connect) { _ in [] }, .immediate(BlueZMethod.disconnect) { _ in [] },
            ])
        try export(Self.service, BlueZInterface.gattService1, Self.serviceProperties())
        try export(Self.characteristic, BlueZInterface.gattCharacteristic1, characteristic, methods: methods)
    }
}
