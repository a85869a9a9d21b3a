import Testing

@testable import DBus

@Suite struct ObjectPathTests {
    @Test(arguments: [
        "/",
        "/a",
        "/A",
        "/_",
        "/0",
        "/org/bluez/hci0",
        "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF",
        "/a/b/c/d/e/f/g",
        "/9/8/7",
        "/Mixed_Case_123/x_",
        // Object paths have no length limit of their own.
        "/" + String(repeating: "a", count: 300),
        String(repeating: "/ab", count: 200),
    ])
    func acceptsValidPaths(_ text: String) throws {
        let path = try ObjectPath(text)
        #expect(path.rawValue == text)
        #expect(path.description == text)
    }

    @Test(arguments: [
        ("", "must not be empty"),
        ("a", "must start with '/'"),
        ("org/bluez", "must start with '/'"),
        (" /a", "must start with '/'"),
        ("\\a", "must start with '/'"),
        ("/a/", "must not end with '/'"),
        ("/org/bluez/", "must not end with '/'"),
        ("//", "must not end with '/'"),
        ("/a//b", "must not contain an empty element"),
        ("//a", "must not contain an empty element"),
        ("/a-b", "contains '-'"),
        ("/a.b", "contains '.'"),
        ("/a b", "contains ' '"),
        ("/a/b:c", "contains ':'"),
        ("/é", "contains U+00E9"),
        ("/e\u{301}", "contains U+0301"),
        ("/🙂", "contains U+1F642"),
        ("/a\0", "contains U+0000"),
        ("/a\n", "contains U+000A"),
        ("/a/b\t/c", "contains U+0009"),
    ])
    func rejectsInvalidPaths(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try ObjectPath(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("object path") == true)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: text)) == true)
    }

    @Test func rootIsSlash() {
        #expect(ObjectPath.root.rawValue == "/")
        #expect(ObjectPath.root.elements.isEmpty)
        #expect(ObjectPath.root.parent == nil)
    }

    @Test(arguments: [
        ("/", [String]()),
        ("/a", ["a"]),
        ("/org/bluez/hci0", ["org", "bluez", "hci0"]),
        ("/_/0/A", ["_", "0", "A"]),
    ])
    func splitsElements(_ text: String, _ expected: [String]) throws {
        #expect(try ObjectPath(text).elements.map(String.init) == expected)
    }

    @Test(arguments: [
        ("/", "org", "/org"),
        ("/org", "bluez", "/org/bluez"),
        ("/org/bluez", "hci0", "/org/bluez/hci0"),
        ("/a", "_", "/a/_"),
        ("/a", "0", "/a/0"),
    ])
    func appendsElements(_ base: String, _ element: String, _ expected: String) throws {
        #expect(try ObjectPath(base).appending(element) == ObjectPath(expected))
    }

    @Test(arguments: [
        ("", "must not be empty"),
        ("a/b", "contains '/'"),
        ("/", "contains '/'"),
        ("a-b", "contains '-'"),
        ("a.b", "contains '.'"),
        ("ä", "contains U+00E4"),
        ("a\0", "contains U+0000"),
    ])
    func rejectsInvalidElements(_ element: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try ObjectPath.root.appending(element) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: element)) == true)
    }

    @Test(arguments: [
        ("/a", "/"),
        ("/a/b", "/a"),
        ("/org/bluez/hci0", "/org/bluez"),
        ("/a_b/c0", "/a_b"),
        // Longer than a small string holds inline: read from the string's own buffer.
        ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"),
    ])
    func hasParent(_ text: String, _ expected: String) throws {
        #expect(try ObjectPath(text).parent == ObjectPath(expected))
    }

    @Test func parentsLeadToRoot() throws {
        var path: ObjectPath? = try ObjectPath("/a/b/c/d")
        var seen: [String] = []
        while let current = path {
            seen.append(current.rawValue)
            path = current.parent
        }
        #expect(seen == ["/a/b/c/d", "/a/b/c", "/a/b", "/a", "/"])
    }

    @Test func appendingThenParentIsIdentity() throws {
        for base in ["/", "/a", "/org/bluez"] {
            let path = try ObjectPath(base)
            #expect(try path.appending("x").parent == path)
        }
    }

    @Test(arguments: [
        ("/a", "/", true),
        ("/a/b", "/", true),
        ("/a/b", "/a", true),
        ("/a/b/c", "/a", true),
        ("/a/b/c", "/a/b", true),
        ("/", "/", false),
        ("/a", "/a", false),
        ("/ab", "/a", false),
        ("/a_", "/a", false),
        ("/a0/b", "/a", false),
        ("/a", "/a/b", false),
        ("/", "/a", false),
        ("/b", "/a", false),
        ("/b/a", "/a", false),
        ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22", true),
        ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010", "/org/bluez/hci0", true),
        ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_220/service0010", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22", false),
        ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_23/service0010", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22", false),
        ("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010", false),
    ])
    func descendants(_ text: String, _ ancestor: String, _ expected: Bool) throws {
        #expect(try ObjectPath(text).isDescendant(of: ObjectPath(ancestor)) == expected)
    }

    @Test(arguments: [
        ("/", "/", true),
        ("/a", "/", true),
        ("/a/b/c", "/", true),
        ("/a", "/a", true),
        ("/a/b", "/a", true),
        ("/a/b/c", "/a/b", true),
        ("/ab", "/a", false),
        ("/a", "/a/b", false),
        ("/", "/a", false),
        ("/b", "/a", false),
    ])
    func namespaces(_ text: String, _ namespace: String, _ expected: Bool) throws {
        #expect(try ObjectPath(text).isInNamespace(ObjectPath(namespace)) == expected)
    }

    @Test func sortsParentsBeforeChildren() throws {
        let texts = ["/b", "/a0", "/a/b", "/", "/a", "/a/b/c", "/A", "/a_"]
        let sorted = try texts.map { text throws(DBusError) in try ObjectPath(text) }.sorted()
        #expect(sorted.map(\.rawValue) == ["/", "/A", "/a", "/a/b", "/a/b/c", "/a0", "/a_", "/b"])
    }

    @Test func hashesByText() throws {
        let paths: Set = [try ObjectPath("/a"), try ObjectPath("/a"), try ObjectPath("/b")]
        #expect(paths.count == 2)
        #expect(ObjectPath(unchecked: "/a") == (try ObjectPath("/a")))
    }
}
