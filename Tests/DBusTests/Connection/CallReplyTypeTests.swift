import DBusTestSupport
import Foundation
import Testing

@testable import DBus

/// Every D-Bus type, sent to an echo method on another connection and compared with the reply:
/// at top level and inside a variant, answered on the I/O thread and on a task.
@Suite struct CallReplyTypeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let label: String
        let value: DBusValue
        var testDescription: String { label }

        init(_ label: String, _ value: DBusValue) {
            self.label = label
            self.value = value
        }
    }

    static func bytes(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }) }

    static let root = ObjectPath.root
    static let device = fixedPath("/org/bluez/hci0/dev_00_11_22_33_44_55")

    static func fixedPath(_ text: String) -> ObjectPath {
        do { return try ObjectPath(text) } catch { preconditionFailure("\(error)") }
    }

    static func fixedSignature(_ text: String) -> Signature {
        do { return try Signature(text) } catch { preconditionFailure("\(error)") }
    }

    static let basics: [Case] = [
        Case("y 0", .byte(0)), Case("y 255", .byte(255)),
        Case("b true", .boolean(true)), Case("b false", .boolean(false)),
        Case("n min", .int16(.min)), Case("n max", .int16(.max)),
        Case("q max", .uint16(.max)),
        Case("i min", .int32(.min)), Case("i -1", .int32(-1)),
        Case("u max", .uint32(.max)),
        Case("x min", .int64(.min)), Case("x max", .int64(.max)),
        Case("t max", .uint64(.max)),
        Case("d", .double(-1.5e300)), Case("d infinity", .double(.infinity)),
        Case("d subnormal", .double(.leastNonzeroMagnitude)),
        Case("s empty", .string("")), Case("s unicode", .string("héllo wörld ✓ 🚀 \u{1F1E9}\u{1F1EA}")),
        Case("s 10k", .string(String(repeating: "abcdefghij", count: 1000))),
        Case("o root", .objectPath(root)), Case("o device", .objectPath(device)),
        Case("g empty", .signature(.empty)), Case("g complex", .signature(fixedSignature("a{sv}(iu)aav"))),
    ]

    static let byteArrays: [Case] = [
        Case("ay empty", .bytes(Data())), Case("ay 1 B", .bytes(bytes(1))),
        Case("ay 512 B", .bytes(bytes(512))), Case("ay 64 KiB", .bytes(bytes(65_536))),
    ]

    static let arrays: [Case] = [
        Case("ab", .array(.boolean, [.boolean(true), .boolean(false), .boolean(true)])),
        Case("an", .array(.int16, [.int16(-1), .int16(.max), .int16(.min)])),
        Case("aq", .array(.uint16, [.uint16(0), .uint16(.max)])),
        Case("ai", .array(.int32, (0..<100).map { .int32($0 * -7) })),
        Case("au", .array(.uint32, [.uint32(.max), .uint32(1)])),
        Case("ax", .array(.int64, [.int64(.min), .int64(.max)])),
        Case("at", .array(.uint64, [.uint64(.max), .uint64(0)])),
        Case("ad", .array(.double, [.double(0.5), .double(-.infinity), .double(1e-300)])),
        Case("as", .array(.string, [.string("a"), .string(""), .string("ü")])),
        Case("ao", .array(.objectPath, [.objectPath(root), .objectPath(device)])),
        Case("ag", .array(.signature, [.signature(.empty), .signature(fixedSignature("a{sv}"))])),
        Case("ai empty", .array(.int32, [])), Case("as empty", .array(.string, [])),
        Case("av empty", .array(.variant, [])), Case("a(is) empty", .array(.structure([.int32, .string]), [])),
        Case("aai empty", .array(.array(.int32), [])), Case("aay empty", .array(.array(.byte), [])),
        Case(
            "aai",
            .array(
                .array(.int32),
                [.array(.int32, [.int32(1), .int32(2)]), .array(.int32, []), .array(.int32, [.int32(3)])])),
        Case(
            "aas",
            .array(.array(.string), [.array(.string, [.string("x")]), .array(.string, [.string("y"), .string("z")])])),
        Case("aay", .array(.array(.byte), [.bytes(bytes(3)), .bytes(Data()), .bytes(bytes(300))])),
        Case(
            "aaai",
            .array(
                .array(.array(.int32)),
                [.array(.array(.int32), [.array(.int32, [.int32(9)]), .array(.int32, [])])])),
        Case("av", .array(.variant, [.variant(.int32(1)), .variant(.string("s")), .variant(.bytes(bytes(4)))])),
    ]

    static let properties = DBusType.dictionary(key: .string, value: .variant)

    static let dictionaries: [Case] = [
        Case(
            "a{sv}",
            .dictionary(
                key: .string, value: .variant,
                [
                    DBusDictionaryEntry(.string("Name"), .variant(.string("thermometer"))),
                    DBusDictionaryEntry(.string("RSSI"), .variant(.int16(-60))),
                    DBusDictionaryEntry(.string("UUIDs"), .variant(.array(.string, [.string("180d")]))),
                    DBusDictionaryEntry(.string("Data"), .variant(.bytes(bytes(20)))),
                ])),
        Case("a{sv} empty", .dictionary(key: .string, value: .variant, [])),
        Case(
            "a{oa{sa{sv}}}",
            .dictionary(
                key: .objectPath, value: .dictionary(key: .string, value: properties),
                [
                    DBusDictionaryEntry(
                        .objectPath(device),
                        .dictionary(
                            key: .string, value: properties,
                            [
                                DBusDictionaryEntry(
                                    .string("org.bluez.Device1"),
                                    .dictionary(
                                        key: .string, value: .variant,
                                        [
                                            DBusDictionaryEntry(.string("Connected"), .variant(.boolean(true))),
                                            DBusDictionaryEntry(.string("Alias"), .variant(.string("Thermo"))),
                                        ])),
                                DBusDictionaryEntry(
                                    .string("org.freedesktop.DBus.Properties"),
                                    .dictionary(key: .string, value: .variant, [])),
                            ])),
                    DBusDictionaryEntry(.objectPath(root), .dictionary(key: .string, value: properties, [])),
                ])),
        Case(
            "a{oa{sa{sv}}} empty",
            .dictionary(key: .objectPath, value: .dictionary(key: .string, value: properties), [])),
        Case(
            "a{yq}",
            .dictionary(
                key: .byte, value: .uint16,
                [DBusDictionaryEntry(.byte(1), .uint16(100)), DBusDictionaryEntry(.byte(255), .uint16(.max))])),
        Case(
            "a{qv} manufacturer data",
            .dictionary(
                key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes(bytes(23))))])),
        Case("a{is}", .dictionary(key: .int32, value: .string, [DBusDictionaryEntry(.int32(-5), .string("minus"))])),
        Case("a{bd}", .dictionary(key: .boolean, value: .double, [DBusDictionaryEntry(.boolean(false), .double(2.5))])),
        Case(
            "a{s(ii)}",
            .dictionary(
                key: .string, value: .structure([.int32, .int32]),
                [DBusDictionaryEntry(.string("p"), .structure([.int32(1), .int32(2)]))])),
        Case(
            "a{sas}",
            .dictionary(
                key: .string, value: .array(.string),
                [
                    DBusDictionaryEntry(.string("k"), .array(.string, [])),
                    DBusDictionaryEntry(.string("l"), .array(.string, [.string("v")])),
                ])),
    ]

    static let structures: [Case] = [
        Case("(i)", .structure([.int32(7)])),
        Case(
            "(ybnqiuxtdsog)",
            .structure([
                .byte(1), .boolean(true), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6), .uint64(7),
                .double(8.5), .string("nine"), .objectPath(device), .signature(fixedSignature("(ii)")),
            ])),
        Case(
            "((i(sd))ay)",
            .structure([.structure([.int32(1), .structure([.string("two"), .double(3)])]), .bytes(bytes(16))])),
        Case(
            "(a{sv}as)", .structure([.dictionary(key: .string, value: .variant, []), .array(.string, [.string("x")])])),
        Case("(vv)", .structure([.variant(.int32(1)), .variant(.variant(.string("deep")))])),
        Case(
            "a(yay)",
            .array(
                .structure([.byte, .array(.byte)]),
                [.structure([.byte(1), .bytes(bytes(2))]), .structure([.byte(2), .bytes(Data())])])),
    ]

    static let variants: [Case] = [
        Case("v i", .variant(.int32(42))),
        Case("v v s", .variant(.variant(.string("variant of variant")))),
        Case("v v v a{sv}", .variant(.variant(.variant(.dictionary(key: .string, value: .variant, []))))),
        Case("v ay", .variant(.bytes(bytes(100)))),
        Case("v (is)", .variant(.structure([.int32(1), .string("s")]))),
        Case("v as empty", .variant(.array(.string, []))),
    ]

    static let all = basics + byteArrays + arrays + dictionaries + structures + variants

    @Test(arguments: all)
    func echoesValue(_ testCase: Case) async throws {
        try await withServiceAndClient { _, service, client in
            let signature = try Signature(types: [testCase.value.type])
            try Echo.export(on: service, signature: signature)
            try service.export(
                [
                    ExportedInterface(
                        Echo.interface,
                        methods: [
                            .immediate(Echo.immediate, in: signature, out: signature) { call in call.body },
                            ExportedMethod(Echo.async, in: signature, out: signature) { call in call.body },
                            .immediate(try member("VariantImmediate"), in: try Signature("v"), out: try Signature("v"))
                            {
                                call in call.body
                            },
                            ExportedMethod(try member("VariantAsync"), in: try Signature("v"), out: try Signature("v"))
                            {
                                call in call.body
                            },
                        ])
                ], at: Echo.path)
            for method in [Echo.immediate, Echo.async] {
                let reply = try await Echo.call(method, on: service, from: client, [testCase.value])
                #expect(reply.kind == .methodReturn)
                #expect(reply.signature == signature.rawValue)
                #expect(reply.body == [testCase.value], "\(method) at top level")
            }
            for method in [try member("VariantImmediate"), try member("VariantAsync")] {
                let wrapped = DBusValue.variant(testCase.value)
                let reply = try await Echo.call(method, on: service, from: client, [wrapped])
                #expect(reply.signature == "v")
                #expect(reply.body == [wrapped], "\(method) inside a variant")
            }
        }
    }

    /// Values whose equality `==` cannot show: NaN and the sign of zero.
    @Test func doublesKeepTheirBits() async throws {
        try await withServiceAndClient { _, service, client in
            try Echo.export(on: service, signature: try Signature("ad"))
            let sent: [Double] = [.nan, -0.0, .signalingNaN, -.infinity, .pi]
            let reply = try await Echo.call(
                Echo.immediate, on: service, from: client, [.array(.double, sent.map { .double($0) })])
            let received: [Double] = try reply.argument(0)
            #expect(received.map(\.bitPattern) == sent.map(\.bitPattern))
        }
    }

    /// Several arguments at once keep their order and types.
    @Test func echoesSeveralArguments() async throws {
        try await withServiceAndClient { _, service, client in
            let arguments: [DBusValue] = [
                .string("first"), .int32(2), .variant(.boolean(true)), .bytes(Self.bytes(3)),
                .dictionary(key: .string, value: .variant, [DBusDictionaryEntry(.string("k"), .variant(.uint64(4)))]),
            ]
            let signature = try Signature(types: arguments.map(\.type))
            try Echo.export(on: service, signature: signature)
            for method in [Echo.immediate, Echo.async] {
                let reply = try await Echo.call(method, on: service, from: client, arguments)
                #expect(reply.body == arguments)
                #expect(reply.signature == "sivaya{sv}")
            }
        }
    }

    /// A method without arguments or results answers with an empty body.
    @Test func echoesNothing() async throws {
        try await withServiceAndClient { _, service, client in
            try Echo.export(on: service, signature: .empty)
            for method in [Echo.immediate, Echo.async] {
                let reply = try await Echo.call(method, on: service, from: client, [])
                #expect(reply.kind == .methodReturn)
                #expect(reply.body.isEmpty)
                #expect(reply.sender == service.uniqueName)
                #expect(reply.destination == client.uniqueName)
            }
        }
    }
}
