import BlueZ
import Testing

@Suite struct BlueZUUIDTests {
    @Test(arguments: [
        ("180D", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("0x180d", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("0000180D", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("0000180D-0000-1000-8000-00805F9B34FB", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("0000180d00001000800000805f9b34fb", "0000180d-0000-1000-8000-00805f9b34fb"),
        ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
    ])
    func canonicalForms(_ text: String, _ canonical: String) {
        #expect(BlueZUUID.canonical(text) == canonical)
    }

    @Test(arguments: ["", "18D", "180G", "0000180d-0000-1000-8000-00805f9b34f", "0000180d_0000_1000_8000_00805f9b34fb"])
    func invalidForms(_ text: String) {
        #expect(BlueZUUID.canonical(text) == nil)
    }

    @Test func shortForms() {
        #expect(BlueZUUID.shortForm("0000180d-0000-1000-8000-00805f9b34fb") == 0x180D)
        #expect(BlueZUUID.shortForm("2A37") == 0x2A37)
        #expect(BlueZUUID.shortForm("6e400001-b5a3-f393-e0a9-e50e24dcca9e") == nil)
        #expect(BlueZUUID.shortForm("12345678") == nil)
    }
}
