import BlueZ
import DBus
import Foundation
import Testing

@testable import BLESimulator

/// The pure parts of the server side, without a bus: application parsing, handle placement,
/// the options dict and advertisement parsing.
@Suite("Server: pure model")
struct ServerModelTests {
    private static func path(_ text: String) -> ObjectPath { (try? ObjectPath(text)) ?? .root }
    private static func strings(_ values: [String]) -> DBusValue { .array(.string, values.map { .string($0) }) }

    private static let objects: ApplicationParser.Objects = [
        path("/app/s0"): [BlueZInterface.gattService1: ["UUID": .string("180D"), "Primary": .boolean(true)]],
        path("/app/s0/c1"): [
            BlueZInterface.gattCharacteristic1: [
                "UUID": .string("2A38"), "Service": .objectPath(path("/app/s0")), "Flags": strings(["read"]),
            ]
        ],
        path("/app/s0/c0"): [
            BlueZInterface.gattCharacteristic1: [
                "UUID": .string("2A37"), "Service": .objectPath(path("/app/s0")),
                "Flags": strings(["notify", "reliable-write"]), "Handle": .uint16(0), "NotifyAcquired": .boolean(false),
            ]
        ],
        path("/app/s0/c0/d0"): [
            BlueZInterface.gattDescriptor1: [
                "UUID": .string("2901"), "Characteristic": .objectPath(path("/app/s0/c0")), "Flags": strings(["read"]),
            ]
        ],
    ]

    @Test("The parser orders objects by path, keeps flags, notes exported Handles and Acquire support")
    func parses() throws {
        let parsed = try ApplicationParser.parse(Self.objects)
        #expect(parsed.services.count == 1)
        let characteristics = parsed.services[0].characteristics
        #expect(characteristics.map(\.path) == [Self.path("/app/s0/c0"), Self.path("/app/s0/c1")])
        #expect(characteristics[0].uuid == "00002a37" + BlueZUUID.baseSuffix)
        #expect(characteristics[0].supportsAcquireNotify && !characteristics[0].supportsAcquireWrite)
        #expect(characteristics[0].descriptors.map(\.uuid) == ["00002901" + BlueZUUID.baseSuffix])
        #expect(parsed.exportedHandles == [Self.path("/app/s0/c0"): BlueZInterface.gattCharacteristic1])
    }

    @Test("Handles: declaration, value, CCC, Extended Properties, then the application's descriptors")
    func places() throws {
        var services = try ApplicationParser.parse(Self.objects).services
        var allocator = HandleAllocator(used: [0x0010...0x0012])
        try allocator.place(&services)
        let service = services[0]
        #expect(service.handle == 0x0013)
        // c0: decl 0x14, value 0x15, CCC 0x16, CEP 0x17, d0 0x18; c1: decl 0x19, value 0x1A.
        #expect(service.characteristics[0].handle == 0x0015 && service.characteristics[0].cccHandle == 0x0016)
        #expect(service.characteristics[0].descriptors[0].handle == 0x0018)
        #expect(service.characteristics[1].handle == 0x001A && service.characteristics[1].cccHandle == nil)
        #expect(service.endHandle == 0x001A)
        #expect(allocator.used.last == 0x0013...0x001A)
    }

    @Test("A requested handle that the layout cannot give, or a range past 0xFFFF, fails")
    func placementFailures() throws {
        var services = try ApplicationParser.parse(Self.objects).services
        services[0].characteristics[1].handle = 0x0040
        var allocator = HandleAllocator()
        #expect(throws: ApplicationRejection.databaseEntry) { try allocator.place(&services) }
        var high = try ApplicationParser.parse(Self.objects).services
        high[0].handle = 0xFFFE
        #expect(throws: ApplicationRejection.databaseEntry) { try allocator.place(&high) }
    }

    @Test("The options dict: bluetoothd's keys, types and order")
    func options() throws {
        let plain = try ServerRequestOptions(
            central: "11:22:33:44:55:66", adapter: Self.path("/org/bluez/hci0"), mtu: 23)
        guard case .dictionary(_, _, let entries) = plain.dictionary else { throw ServerTestError("not a dict") }
        #expect(entries.map(\.key) == [.string("device"), .string("link"), .string("mtu")])
        #expect(entries.map(\.value.unwrappingVariant.type.signature) == ["o", "s", "q"])
        let full = try ServerRequestOptions(
            central: "11:22:33:44:55:66", adapter: Self.path("/org/bluez/hci1"), offset: 4, mtu: 23,
            prepareAuthorize: true)
        guard case .dictionary(_, _, let all) = full.dictionary else { throw ServerTestError("not a dict") }
        #expect(
            all.map(\.key) == [
                .string("device"), .string("offset"), .string("link"), .string("prepare-authorize"), .string("mtu"),
            ])
        #expect(all[0].value == .variant(.objectPath(Self.path("/org/bluez/hci1/dev_11_22_33_44_55_66"))))
    }

    @Test("Advertisement parsing: a minimal peripheral parses; every rule of §6.2 is enforced")
    func advertisementRules() throws {
        let minimal = try AdvertisementParser.parse(["Type": .string("peripheral")])
        #expect(minimal.type == .peripheral)
        var broadcast = LEAdvertisementProperties(type: .broadcast)
        broadcast.discoverable = false
        try AdvertisementParser.validate(broadcast)
        broadcast.discoverable = true
        #expect(throws: AdvertisementParser.Failure.self) { try AdvertisementParser.validate(broadcast) }
        var timed = LEAdvertisementProperties(type: .peripheral)
        timed.discoverableTimeout = 10
        try AdvertisementParser.validate(timed)  // no Timeout: nothing to exceed
        timed.timeout = 5
        #expect(throws: AdvertisementParser.Failure.self) { try AdvertisementParser.validate(timed) }
        var intervals = LEAdvertisementProperties(type: .peripheral)
        intervals.minInterval = 20
        intervals.maxInterval = 10_485_759
        try AdvertisementParser.validate(intervals)
        intervals.maxInterval = 10_485_760
        #expect(throws: AdvertisementParser.Failure.self) { try AdvertisementParser.validate(intervals) }
    }

    @Test("RemoteCentralError maps call failures: remote errors by name, timeouts to 0x0E")
    func errorMapping() {
        let remote = RemoteCentralError(call: DBusError.reply(BlueZErrorName.notPermitted, ""), isWrite: true)
        #expect(remote.code == .applicationError && remote.attError == 0x03)
        let timeout = RemoteCentralError(call: DBusError(.timeout, message: "late"), isWrite: false)
        #expect(timeout.code == .timeout && timeout.attError == 0x0E)
        #expect(timeout.description.hasPrefix("timeout (ATT 0x0e)"))
    }
}
