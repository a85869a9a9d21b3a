import Testing

@testable import DBus

private func repeated(_ text: String, _ count: Int) -> String {
    String(repeating: text, count: count)
}

/// `depth` arrays around `inner`.
private func nestedArrays(_ depth: Int, around inner: DBusType) -> DBusType {
    var type = inner
    for _ in 0..<depth { type = .array(type) }
    return type
}

/// `depth` single-field structures around `inner`.
private func nestedStructs(_ depth: Int, around inner: DBusType) -> DBusType {
    var type = inner
    for _ in 0..<depth { type = .structure([type]) }
    return type
}

/// `depth` dictionaries with string keys, each the value of the next, around `inner`.
private func nestedDictionaries(_ depth: Int, around inner: DBusType) -> DBusType {
    var type = inner
    for _ in 0..<depth { type = .dictionary(key: .string, value: type) }
    return type
}

private let complexSignatures: [String] = [
    "",
    "i",
    "sa{sv}as",
    "a{oa{sa{sv}}}",
    "a(oa{sa{sv}})",
    "(ybnqiuxtdsogh)",
    "a{ya(ii)}",
    "aay",
    "((i)(s(v)))",
    "a{sa{sa{sv}}}",
    "a(a(a(i)))",
    "vvv",
    "a{hv}a{bv}a{dv}a{gv}a{ov}a{tv}",
    "oa{sa{sv}}",
    "(ii)(ss)a(ss)",
    repeated("a", 32) + "i",
    repeated("(", 32) + "i" + repeated(")", 32),
    repeated("a(", 32) + "i" + repeated(")", 32),
    repeated("a{s", 32) + "i" + repeated("}", 32),
    repeated("i", 255),
]

private let signaturesAtTheLimits: [String] = [
    repeated("i", 255),
    repeated("y", 127) + "a{sv}" + repeated("s", 123),
    repeated("a", 32) + "i",
    repeated("(", 32) + "i" + repeated(")", 32),
    // 32 arrays and 32 structures: 64 containers in all.
    repeated("a(", 32) + "i" + repeated(")", 32),
    repeated("(", 32) + repeated("a", 32) + "i" + repeated(")", 32),
    // 32 arrays and 32 dictionary entries: 64 containers in all.
    repeated("a{s", 32) + "i" + repeated("}", 32),
]

private let signaturesBeyondTheLimits: [(String, String)] = [
    (repeated("i", 256), "is 256 bytes long, more than the maximum of 255"),
    (repeated("i", 1000), "is 1000 bytes long"),
    // 255 characters but 256 bytes: the limit counts UTF-8 bytes.
    (repeated("i", 254) + "é", "is 256 bytes long"),
    (repeated("a", 33) + "i", "nests more than 32 arrays (array at offset 32)"),
    (repeated("a", 300), "is 300 bytes long"),
    (repeated("(", 33) + "i" + repeated(")", 33), "nests more than 32 structures"),
    // Arrays count through the structures between them.
    (repeated("a(", 32) + "ai" + repeated(")", 32), "nests more than 32 arrays"),
    (repeated("a(", 33) + "i" + repeated(")", 33), "nests more than 32 arrays"),
    // Structures count through the arrays between them.
    ("a" + repeated("(a", 33) + "i" + repeated(")", 33), "nests more than 32"),
    (repeated("(a", 33) + "i" + repeated(")", 33), "nests more than 32 structures"),
    // 65 containers while neither arrays nor structures pass 32.
    ("(" + repeated("a{s", 32) + "i" + repeated("}", 32) + ")", "more than 64 containers"),
    (repeated("a{s", 32) + "(i)" + repeated("}", 32), "more than 64 containers"),
    (
        repeated("(", 32) + repeated("a", 31) + "a{si}" + repeated(")", 32),
        "more than 64 containers"
    ),
]

private let invalidTypes: [([DBusType], String)] = [
    ([DBusType.structure([])], "structure at offset 0 is empty"),
    ([.array(.structure([]))], "structure at offset 1 is empty"),
    ([.dictionary(key: .variant, value: .string)], "keys must be basic"),
    ([.dictionary(key: .array(.byte), value: .string)], "keys must be basic"),
    ([.dictionary(key: .structure([.int32]), value: .string)], "keys must be basic"),
    (
        [.dictionary(key: .dictionary(key: .string, value: .string), value: .string)],
        "keys must be basic"
    ),
    ([nestedArrays(33, around: .int32)], "nests more than 32 arrays"),
    ([nestedStructs(33, around: .int32)], "nests more than 32 structures"),
    (
        [.structure([nestedDictionaries(32, around: .int32)])],
        "more than 64 containers"
    ),
    (Array(repeating: .int32, count: 256), "longer than the maximum of 255 bytes"),
    ([.string, nestedArrays(300, around: .byte)], "longer than the maximum of 255 bytes"),
    // Far deeper than any limit: must be refused without recursing through every level.
    ([nestedArrays(2000, around: .byte)], "longer than the maximum of 255 bytes"),
]

@Suite struct SignatureTests {
    @Test(arguments: [
        ("y", DBusType.byte),
        ("b", .boolean),
        ("n", .int16),
        ("q", .uint16),
        ("i", .int32),
        ("u", .uint32),
        ("x", .int64),
        ("t", .uint64),
        ("d", .double),
        ("s", .string),
        ("o", .objectPath),
        ("g", .signature),
        ("h", .unixFD),
        ("v", .variant),
    ])
    func parsesEveryBasicCodeAndVariant(_ code: String, _ expected: DBusType) throws {
        let signature = try Signature(code)
        #expect(signature.types == [expected])
        #expect(signature.isSingleCompleteType)
        #expect(expected.signature == code)
    }

    @Test(arguments: [
        ("", [DBusType]()),
        ("ai", [.array(.int32)]),
        ("aai", [.array(.array(.int32))]),
        ("av", [.array(.variant)]),
        ("a{sv}", [.dictionary(key: .string, value: .variant)]),
        ("a{hv}", [.dictionary(key: .unixFD, value: .variant)]),
        ("a{ias}", [.dictionary(key: .int32, value: .array(.string))]),
        ("(i)", [.structure([.int32])]),
        ("(is)", [.structure([.int32, .string])]),
        ("((i))", [.structure([.structure([.int32])])]),
        ("(ii)(ss)", [.structure([.int32, .int32]), .structure([.string, .string])]),
        (
            "sa{sv}as",
            [.string, .dictionary(key: .string, value: .variant), .array(.string)]
        ),
        (
            "a{oa{sa{sv}}}",
            [
                .dictionary(
                    key: .objectPath,
                    value: .dictionary(
                        key: .string, value: .dictionary(key: .string, value: .variant)))
            ]
        ),
        (
            "a(oa{sv})",
            [.array(.structure([.objectPath, .dictionary(key: .string, value: .variant)]))]
        ),
        ("a{ya(ii)}", [.dictionary(key: .byte, value: .array(.structure([.int32, .int32])))]),
        (
            "a{sa{sv}}",
            [.dictionary(key: .string, value: .dictionary(key: .string, value: .variant))]
        ),
    ])
    func parsesContainers(_ text: String, _ expected: [DBusType]) throws {
        let signature = try Signature(text)
        #expect(signature.rawValue == text)
        #expect(signature.description == text)
        #expect(signature.types == expected)
    }

    @Test(arguments: [
        // Incomplete types.
        ("a", "array at offset 0 has no element type"),
        ("aa", "array at offset 1 has no element type"),
        ("ia", "array at offset 1 has no element type"),
        ("(a)", "array at offset 1 has no element type"),
        ("a}", "array at offset 0 has no element type"),
        ("(i", "structure at offset 0 is not closed"),
        ("((i)", "structure at offset 0 is not closed"),
        ("(", "structure at offset 0 is not closed"),
        ("i)", "')' at offset 1 closes no structure"),
        (")", "')' at offset 0 closes no structure"),
        ("(i))", "')' at offset 3 closes no structure"),
        // Empty structures.
        ("()", "structure at offset 0 is empty"),
        ("(())", "structure at offset 1 is empty"),
        ("a()", "structure at offset 1 is empty"),
        // Dictionary entries outside arrays.
        ("{sv}", "dictionary entry at offset 0 is not directly inside an array"),
        ("a({sv})", "dictionary entry at offset 2 is not directly inside an array"),
        ("(a{sv}{sv})", "dictionary entry at offset 6 is not directly inside an array"),
        ("aa{sv}{sv}", "dictionary entry at offset 6 is not directly inside an array"),
        ("}", "'}' at offset 0 closes no dictionary entry"),
        ("a{sv}}", "'}' at offset 5 closes no dictionary entry"),
        // Dictionary entries without exactly two complete types.
        ("a{", "dictionary entry at offset 1 is not closed"),
        ("a{s", "dictionary entry at offset 1 is not closed"),
        ("a{sv", "dictionary entry at offset 1 is not closed"),
        ("a{}", "it is empty"),
        ("a{s}", "it has one"),
        ("a{svs}", "it has more"),
        ("a{sa}", "array at offset 3 has no element type"),
        // Dictionary keys that are not basic.
        ("a{vs}", "key type \"v\" at offset 2; keys must be basic"),
        ("a{(i)s}", "key type \"(i)\" at offset 2; keys must be basic"),
        ("a{ais}", "key type \"ai\" at offset 2; keys must be basic"),
        ("a{a{ss}s}", "key type \"a{ss}\" at offset 2; keys must be basic"),
        // Unknown type codes.
        ("z", "unknown type code 'z' at offset 0"),
        ("r", "unknown type code 'r' at offset 0"),
        ("e", "unknown type code 'e' at offset 0"),
        ("m", "unknown type code 'm' at offset 0"),
        ("*", "unknown type code '*' at offset 0"),
        ("I", "unknown type code 'I' at offset 0"),
        ("i s", "unknown type code ' ' at offset 1"),
        ("a{s?}", "unknown type code '?' at offset 3"),
        ("\0", "unknown type code U+0000 at offset 0"),
        ("é", "unknown type code a non-ASCII character at offset 0"),
        ("a🙂", "unknown type code a non-ASCII character at offset 1"),
    ])
    func rejectsMalformedSignatures(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try Signature(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains("signature") == true)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: text)) == true)
    }

    @Test(arguments: signaturesAtTheLimits)
    func acceptsSignaturesAtTheLimits(_ text: String) throws {
        #expect(try Signature(text).rawValue == text)
    }

    @Test(arguments: signaturesBeyondTheLimits)
    func rejectsSignaturesBeyondTheLimits(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try Signature(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(String(reflecting: text)) == true)
    }

    @Test(arguments: complexSignatures)
    func roundTripsThroughTypes(_ text: String) throws {
        let signature = try Signature(text)
        let rebuilt = try Signature(types: signature.types)
        #expect(rebuilt.rawValue == signature.rawValue)
        #expect(rebuilt.types == signature.types)
        #expect(rebuilt == signature)
        #expect(signature.types.map(\.signature).joined() == text)
    }

    @Test(arguments: [
        (DBusType.array(.int32), "ai"),
        (.array(.array(.byte)), "aay"),
        (.dictionary(key: .string, value: .variant), "a{sv}"),
        (
            .dictionary(key: .objectPath, value: .dictionary(key: .string, value: .variant)),
            "a{oa{sv}}"
        ),
        (.structure([.int32]), "(i)"),
        (.structure([.int32, .string, .variant]), "(isv)"),
        (.structure([.structure([.byte]), .array(.structure([.double]))]), "((y)a(d))"),
        (.array(.dictionary(key: .string, value: .variant)), "aa{sv}"),
        (.variant, "v"),
        (.unixFD, "h"),
    ])
    func typeSignatures(_ type: DBusType, _ expected: String) throws {
        #expect(type.signature == expected)
        #expect(type.description == expected)
        #expect(try Signature.parseSingle(expected) == type)
        #expect(try Signature(types: [type]).rawValue == expected)
    }

    @Test(arguments: invalidTypes)
    func rejectsInvalidTypes(_ types: [DBusType], _ rule: String) {
        let error = #expect(throws: DBusError.self) { try Signature(types: types) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
    }

    @Test func acceptsTypesAtTheLimits() throws {
        #expect(try Signature(types: Array(repeating: .int32, count: 255)).rawValue.count == 255)
        #expect(try Signature(types: [nestedArrays(32, around: .int32)]).types.count == 1)
        #expect(try Signature(types: [nestedStructs(32, around: .int32)]).types.count == 1)
        let mixed = nestedArrays(
            1, around: nestedStructs(32, around: nestedArrays(31, around: .byte)))
        #expect(try Signature(types: [mixed]).types == [mixed])
        let dictionaries = nestedDictionaries(32, around: .int32)
        #expect(try Signature(types: [dictionaries]).types == [dictionaries])
    }

    @Test func emptySignature() throws {
        #expect(Signature.empty.rawValue == "")
        #expect(Signature.empty.types.isEmpty)
        #expect(!Signature.empty.isSingleCompleteType)
        #expect(try Signature("") == .empty)
        #expect(try Signature(types: []) == .empty)
    }

    @Test(arguments: [
        ("", false),
        ("i", true),
        ("v", true),
        ("ai", true),
        ("a{sv}", true),
        ("(ii)", true),
        ("a(oa{sv})", true),
        ("ii", false),
        ("a{sv}i", false),
        ("sa{sv}as", false),
    ])
    func singleCompleteType(_ text: String, _ expected: Bool) throws {
        #expect(try Signature(text).isSingleCompleteType == expected)
    }

    @Test(arguments: [
        ("", "must be exactly one complete type, found 0"),
        ("ii", "must be exactly one complete type, found 2"),
        ("sa{sv}as", "must be exactly one complete type, found 3"),
        ("a{vs}", "keys must be basic"),
        ("a", "has no element type"),
    ])
    func parseSingleRejects(_ text: String, _ rule: String) {
        let error = #expect(throws: DBusError.self) { try Signature.parseSingle(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.message.contains(rule) == true, "\(error?.message ?? "")")
    }

    @Test func equalityAndHashingUseTheText() throws {
        let parsed = try Signature("a{sv}")
        let built = try Signature(types: [.dictionary(key: .string, value: .variant)])
        #expect(parsed == built)
        #expect(parsed.hashValue == built.hashValue)
        #expect(Set([parsed, built, try Signature("as")]).count == 2)
        #expect(try Signature("ai") != Signature("au"))
    }
}
