import Testing

@testable import DBus

@Suite struct MemberNameTests {
    @Test(arguments: [
        "Get",
        "GetManagedObjects",
        "PropertiesChanged",
        "a",
        "_",
        "_private",
        "a1",
        "A_B_9",
        String(repeating: "a", count: 255),
    ])
    func acceptsValidNames(_ text: String) throws {
        let name = try MemberName(text)
        #expect(name.rawValue == text)
        #expect(name.description == text)
    }

    @Test(arguments: [
        ("", "must not be empty"),
        (String(repeating: "a", count: 256), "is 256 bytes long, more than the maximum of 255"),
        // 255 characters but 256 bytes: the limit counts UTF-8 bytes.
        (String(repeating: "a", count: 254) + "é", "is 256 bytes long"),
        ("1abc", "must not start with a digit"),
        ("9", "must not start with a digit"),
        ("Get.All", "contains '.'"),
        ("Get.", "contains '.'"),
        (".Get", "contains '.'"),
        ("org.bluez.Device1", "contains '.'"),
        ("Get-All", "contains '-'"),
        ("Get All", "contains ' '"),
        ("Get/All", "contains '/'"),
        ("Gét", "contains U+00E9"),
        ("Get\0", "contains U+0000"),
        ("Get\n", "contains U+000A"),
    ])
    func rejectsInvalidNames(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try MemberName(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("member name") == true)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: text)) == true)
    }

    @Test func comparesAndHashesByText() throws {
        let names = try ["Set", "Get", "GetAll"].map { text throws(DBusError) in
            try MemberName(text)
        }
        #expect(names.sorted().map(\.rawValue) == ["Get", "GetAll", "Set"])
        #expect(Set(names + names).count == 3)
        #expect(MemberName(unchecked: "Get") == names[1])
    }
}
