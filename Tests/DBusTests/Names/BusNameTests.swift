import Testing

@testable import DBus

/// 255 bytes: the longest allowed well-known name.
private let longestWellKnown = "a." + String(repeating: "b", count: 253)
/// 255 bytes: the longest allowed unique name.
private let longestUnique = ":1." + String(repeating: "2", count: 252)

@Suite struct BusNameTests {
    @Test(arguments: [
        "org.bluez",
        "org.freedesktop.DBus",
        "a.b",
        "A.B",
        "_a._b",
        "a-b.c_d",
        "org.example.App-1",
        "org.example.a1.b2",
        "com.example.-dash",
        longestWellKnown,
    ])
    func acceptsWellKnownNames(_ text: String) throws {
        let name = try BusName(text)
        #expect(name.rawValue == text)
        #expect(name.description == text)
        #expect(!name.isUnique)
    }

    @Test(arguments: [
        ":1.42",
        ":1.0",
        ":0.1",
        ":1.2.3",
        ":a.b",
        ":0-1.9_x",
        ":-.-",
        longestUnique,
    ])
    func acceptsUniqueNames(_ text: String) throws {
        let name = try BusName(text)
        #expect(name.rawValue == text)
        #expect(name.isUnique)
    }

    @Test(arguments: [
        ("", "must not be empty"),
        (longestWellKnown + "b", "is 256 bytes long, more than the maximum of 255"),
        (longestUnique + "2", "is 256 bytes long, more than the maximum of 255"),
        // 255 characters but 256 bytes: the limit counts UTF-8 bytes.
        ("a." + String(repeating: "b", count: 252) + "é", "is 256 bytes long"),
        (".org.bluez", "must not start with '.'"),
        (".", "must not start with '.'"),
        ("org.bluez.", "must not end with '.'"),
        ("org.", "must not end with '.'"),
        (":1.", "must not end with '.'"),
        ("org", "must have at least two elements"),
        ("bluez", "must have at least two elements"),
        (":1", "must have at least two elements"),
        (":", "must have at least two elements"),
        ("org..bluez", "element \"\" must not be empty"),
        (":1..2", "element \"\" must not be empty"),
        (":.1", "element \"\" must not be empty"),
        ("1org.bluez", "must not start with a digit"),
        ("org.1bluez", "must not start with a digit"),
        ("org.bluez.0", "must not start with a digit"),
        ("org.blu ez", "contains ' '"),
        ("org.blu/ez", "contains '/'"),
        ("org.bl:uez", "contains ':'"),
        ("::1.2", "contains ':'"),
        ("org.blüez", "contains U+00FC"),
        ("org.🙂.x", "contains U+1F642"),
        ("org.bluez\0", "contains U+0000"),
        (":1.4\n", "contains U+000A"),
    ])
    func rejectsInvalidNames(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try BusName(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("bus name") == true)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: text)) == true)
    }

    @Test func busConstant() throws {
        #expect(BusName.bus.rawValue == "org.freedesktop.DBus")
        #expect(BusName.bus == (try BusName("org.freedesktop.DBus")))
        #expect(!BusName.bus.isUnique)
    }

    @Test func comparesAndHashesByText() throws {
        let names = try ["org.b", ":1.2", "org.a", ":1.10"].map { text throws(DBusError) in
            try BusName(text)
        }
        #expect(names.sorted().map(\.rawValue) == [":1.10", ":1.2", "org.a", "org.b"])
        #expect(Set(names + names).count == 4)
    }
}
