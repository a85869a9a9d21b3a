import BlueZ
import DBus
import Testing

@Suite struct BluetoothAddressTests {
    @Test(arguments: [
        ("AA:BB:CC:DD:EE:FF", UInt64(0xAABB_CCDD_EEFF)),
        ("aa:bb:cc:dd:ee:ff", 0xAABB_CCDD_EEFF),
        ("C4:7c:8D:6a:11:22", 0xC47C_8D6A_1122),
        ("00:00:00:00:00:00", 0),
        ("FF:FF:FF:FF:FF:FF", 0xFFFF_FFFF_FFFF),
    ])
    func parsesCaseInsensitively(_ text: String, _ value: UInt64) throws {
        let address = try BluetoothAddress(text)
        #expect(address.rawValue == value)
        #expect(address.description == text.uppercased())
    }

    @Test(arguments: [
        "", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "AABBCCDDEEFF", "AA:BB:CC:DD:EE:F",
        "AA:BB:CC:DD:EE:FFF", "GG:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:", ":AA:BB:CC:DD:EE", " AA:BB:CC:DD:EE:FF",
        "AA:BB:CC:DD:EE:+F", "AA::BB:CC:DD:EE", "٣٣:BB:CC:DD:EE:FF",
    ])
    func rejectsMalformedText(_ text: String) {
        let error = #expect(throws: DBusError.self) { try BluetoothAddress(text) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("AA:BB:CC:DD:EE:FF") == true)
    }

    @Test func bytesRoundTrip() throws {
        let address = try BluetoothAddress("01:23:45:67:89:AB")
        #expect(address.bytes == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB])
        #expect(try BluetoothAddress(bytes: address.bytes) == address)
        #expect(throws: DBusError.self) { try BluetoothAddress(bytes: [1, 2, 3]) }
        #expect(BluetoothAddress(rawValue: 1 << 48) == nil)
        #expect(BluetoothAddress(rawValue: 0x0123_4567_89AB) == address)
    }

    @Test func aliasFallbackUsesDashes() throws {
        #expect(try BluetoothAddress("c4:7c:8d:6a:11:22").aliasFallback == "C4-7C-8D-6A-11-22")
    }

    @Test func ordersNumerically() throws {
        #expect(try BluetoothAddress("00:00:00:00:00:02") < BluetoothAddress("00:00:00:00:01:00"))
    }

    @Test(arguments: [
        ("C0:00:00:00:00:01", RandomAddressKind.staticRandom, false),
        ("FF:FF:FF:FF:FF:FF", .staticRandom, false),
        ("40:00:00:00:00:01", .resolvablePrivate, true),
        ("7F:12:34:56:78:9A", .resolvablePrivate, true),
        ("00:12:34:56:78:9A", .nonResolvablePrivate, true),
        ("3F:12:34:56:78:9A", .nonResolvablePrivate, true),
        ("80:12:34:56:78:9A", .reserved, false),
    ])
    func randomAddressKinds(_ text: String, _ kind: RandomAddressKind, _ isPrivate: Bool) throws {
        let address = try BluetoothAddress(text)
        #expect(address.randomAddressKind == kind)
        #expect(address.isRandomPrivate == isPrivate)
        #expect(address.isPrivate(addressType: .random) == isPrivate)
        // A public address is never private, whatever its bits.
        #expect(!address.isPrivate(addressType: .public))
    }

    @Test func dbusRepresentation() throws {
        let address = try BluetoothAddress("aa:bb:cc:dd:ee:ff")
        #expect(address.dbusValue == .string("AA:BB:CC:DD:EE:FF"))
        #expect(try BluetoothAddress(dbusValue: .variant(.string("AA:BB:CC:DD:EE:FF"))) == address)
        let wrongType = #expect(throws: DBusError.self) { try BluetoothAddress(dbusValue: .uint64(1)) }
        #expect(wrongType?.code == .typeMismatch)
    }
}
