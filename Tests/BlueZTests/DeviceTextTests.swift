import BlueZ
import DBus
import Testing

/// ``BlueZPath/deviceText(containing:)``, the device prefix every `Value` change is routed by.
@Suite("Device text of a path")
struct DeviceTextTests {
    @Test(
        "the device element ends the prefix; paths outside a device have none",
        arguments: [
            ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"),
            ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service000c/char000d", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"),
            ("/org/bluez/hci12/dev_AA/x", "/org/bluez/hci12/dev_AA"),
            ("/org/bluez/hci0", nil), ("/org/bluez/hci0/player0", nil), ("/org/bluez", nil),
            ("/com/example/hci0/dev_AA", nil), ("/", nil),
        ])
    func deviceText(path: String, expected: String?) throws {
        let text = BlueZPath.deviceText(containing: try ObjectPath(path))
        #expect(text.map(String.init) == expected)
    }
}

/// ``BlueZPath/device(below:)``, the device a GATT object's change is filed under.
@Suite("Device a path lies below")
struct DeviceBelowTests {
    @Test(
        "only objects strictly below a device have one",
        arguments: [
            ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service000c/char000d", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"),
            ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service000c", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"),
            ("/org/bluez/hci12/dev_AA/x", "/org/bluez/hci12/dev_AA"),
            ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22", nil), ("/org/bluez/hci0", nil),
            ("/org/bluez/hci0/player0/track1", nil), ("/com/example/hci0/dev_AA/x", nil), ("/", nil),
        ])
    func deviceBelow(path: String, expected: String?) throws {
        #expect(BlueZPath.device(below: try ObjectPath(path))?.rawValue == expected)
    }
}
