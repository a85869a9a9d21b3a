import Testing

@testable import DBus

/// 255 bytes: the longest allowed error name.
private let longestName = "a." + String(repeating: "b", count: 253)

@Suite struct ErrorNameTests {
    @Test(arguments: [
        "org.freedesktop.DBus.Error.Failed",
        "org.bluez.Error.NotReady",
        "a.b",
        "_a._b",
        "A_1.B_2.c3",
        longestName,
    ])
    func acceptsValidNames(_ text: String) throws {
        let name = try ErrorName(text)
        #expect(name.rawValue == text)
        #expect(name.description == text)
    }

    @Test(arguments: [
        DBusError.StandardName.failed,
        DBusError.StandardName.noReply,
        DBusError.StandardName.timeout,
        DBusError.StandardName.disconnected,
        DBusError.StandardName.invalidArgs,
        DBusError.StandardName.unknownMethod,
        DBusError.StandardName.unknownObject,
        DBusError.StandardName.unknownInterface,
        DBusError.StandardName.unknownProperty,
        DBusError.StandardName.propertyReadOnly,
        DBusError.StandardName.serviceUnknown,
        DBusError.StandardName.nameHasNoOwner,
        DBusError.StandardName.accessDenied,
        DBusError.StandardName.limitsExceeded,
        DBusError.StandardName.notSupported,
    ])
    func acceptsStandardNames(_ text: String) throws {
        #expect(try ErrorName(text).rawValue == text)
    }

    @Test(arguments: [
        ("", "must not be empty"),
        (longestName + "b", "is 256 bytes long, more than the maximum of 255"),
        // 255 characters but 256 bytes: the limit counts UTF-8 bytes.
        ("a." + String(repeating: "b", count: 252) + "é", "is 256 bytes long"),
        ("Failed", "must have at least two elements"),
        (".org.Error", "must not start with '.'"),
        ("org.Error.", "must not end with '.'"),
        ("org..Error", "must not contain an empty element"),
        ("1org.Error", "must not start with a digit"),
        ("org.Error.1Failed", "must not start with a digit"),
        ("org.Error.Not-Ready", "contains '-'"),
        ("org.Error.Not Ready", "contains ' '"),
        ("org.Error.Échec", "contains U+00C9"),
        ("org.Error\0", "contains U+0000"),
    ])
    func rejectsInvalidNames(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try ErrorName(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("error name") == true)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: text)) == true)
    }

    @Test func comparesAndHashesByText() throws {
        let names = try ["org.b.E", "org.a.E"].map { text throws(DBusError) in
            try ErrorName(text)
        }
        #expect(names.sorted().map(\.rawValue) == ["org.a.E", "org.b.E"])
        #expect(Set(names + names).count == 2)
    }
}
