import Testing

@testable import DBus

/// 255 bytes: the longest allowed interface name.
private let longestName = "a." + String(repeating: "b", count: 253)

@Suite struct InterfaceNameTests {
    @Test(arguments: [
        "org.bluez.Device1",
        "org.freedesktop.DBus.Properties",
        "a.b",
        "A.B",
        "_a._b",
        "_.__",
        "A_1.B_2.c3",
        "org.bluez.GattCharacteristic1",
        longestName,
    ])
    func acceptsValidNames(_ text: String) throws {
        let name = try InterfaceName(text)
        #expect(name.rawValue == text)
        #expect(name.description == text)
    }

    @Test(arguments: [
        ("", "must not be empty"),
        (longestName + "b", "is 256 bytes long, more than the maximum of 255"),
        // 255 characters but 256 bytes: the limit counts UTF-8 bytes.
        ("a." + String(repeating: "b", count: 252) + "é", "is 256 bytes long"),
        ("org", "must have at least two elements"),
        ("Device1", "must have at least two elements"),
        ("org/bluez", "must have at least two elements"),
        (".org.bluez", "must not start with '.'"),
        (".", "must not start with '.'"),
        ("org.bluez.", "must not end with '.'"),
        ("org.", "must not end with '.'"),
        ("org..bluez", "must not contain an empty element"),
        ("1org.bluez", "element \"1org\" must not start with a digit"),
        ("org.1bluez", "element \"1bluez\" must not start with a digit"),
        ("org.bluez.9", "must not start with a digit"),
        // '-' is fine in bus names but not in interface names.
        ("org.blu-ez", "contains '-'"),
        ("org.blu ez", "contains ' '"),
        ("org.bluez/x", "contains '/'"),
        (":1.42", "contains ':'"),
        ("org.blüez", "contains U+00FC"),
        ("org.bluez\u{301}.x", "contains U+0301"),
        ("org.bluez\0", "contains U+0000"),
    ])
    func rejectsInvalidNames(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try InterfaceName(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("interface name") == true)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: text)) == true)
    }

    @Test(arguments: [
        (InterfaceName.properties, "org.freedesktop.DBus.Properties"),
        (InterfaceName.objectManager, "org.freedesktop.DBus.ObjectManager"),
        (InterfaceName.introspectable, "org.freedesktop.DBus.Introspectable"),
        (InterfaceName.peer, "org.freedesktop.DBus.Peer"),
        (InterfaceName.bus, "org.freedesktop.DBus"),
    ])
    func constantsAreValid(_ constant: InterfaceName, _ text: String) throws {
        #expect(constant.rawValue == text)
        #expect(try InterfaceName(constant.rawValue) == constant)
    }

    @Test func comparesAndHashesByText() throws {
        let names = try ["org.b.X", "org.a.Y", "org.a.X"].map { text throws(DBusError) in
            try InterfaceName(text)
        }
        #expect(names.sorted().map(\.rawValue) == ["org.a.X", "org.a.Y", "org.b.X"])
        #expect(Set(names + names).count == 3)
    }
}
