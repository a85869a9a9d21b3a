import CDBus
import Foundation
import Testing

@testable import DBus

/// ``WireDecoder`` reads bodies from their wire form as libdbus's iterators do: the same values
/// for every type and nesting, in either byte order, and nil (so that the iterators decode
/// instead) for what it does not read.
@Suite struct WireDecoderTests {
    static let path = ObjectPath(unchecked: "/org/example/object")
    static let interface = InterfaceName(unchecked: "org.example.Widget1")
    static let member = MemberName(unchecked: "Changed")

    /// `body` as a received message: encoded, marshalled and read back by libdbus, as a
    /// message arriving from the bus is.
    static func received(_ body: [DBusValue]) throws -> OpaquePointer {
        let message = DBusMessage(kind: .signal, path: path, interface: interface, member: member, body: body)
        return try received(wire: message.wireFormat())
    }

    static func received(wire bytes: [UInt8]) throws -> OpaquePointer {
        let failure = cdbus_error_new()
        defer { cdbus_error_delete(failure) }
        let raw = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                dbus_message_demarshal($0.baseAddress, Int32($0.count), failure)
            }
        }
        return try #require(raw)
    }

    static func wireBody(_ raw: OpaquePointer) -> [DBusValue]? {
        WireDecoder.withBody(of: raw) { decoder, signature in decoder.body(signature) }
    }

    static let sampleSignature: Signature = {
        do { return try Signature("a{sv}(iay)") } catch { preconditionFailure("\(error)") }
    }()

    /// Bodies covering every type the reader takes, alignment after every size, and nesting.
    static let bodies: [[DBusValue]] = [
        [.byte(0), .byte(255), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535)],
        [.int32(Int32.min), .uint32(UInt32.max), .int64(Int64.min), .uint64(UInt64.max), .double(-1.5e300)],
        [.byte(7), .uint64(1), .byte(8), .int16(-2), .double(0.25), .byte(9), .int32(3)],
        [.string(""), .string("héllo, wörld ✓"), .objectPath(.root), .objectPath(path)],
        [.signature(sampleSignature), .signature(.empty)],
        [.bytes(Data()), .bytes(Data([1])), .bytes(Data((0..<1000).map { UInt8($0 % 256) }))],
        [.array(.string, []), .array(.int64, []), .array(.structure([.byte, .uint64]), [])],
        [.array(.uint16, [.uint16(1), .uint16(2), .uint16(3)]), .array(.double, [.double(1), .double(2)])],
        [.array(.array(.string), [.array(.string, [.string("a"), .string("bc")]), .array(.string, [])])],
        [
            .array(
                .structure([.byte, .uint64, .string]),
                [.structure([.byte(1), .uint64(2), .string("x")]), .structure([.byte(3), .uint64(4), .string("")])])
        ],
        [.structure([.byte(1), .structure([.int16(2), .bytes(Data([3, 4]))]), .variant(.uint32(5))])],
        [.variant(.variant(.variant(.string("deep")))), .variant(.bytes(Data([9]))), .variant(.array(.int32, []))],
        [
            .dictionary(
                key: .string, value: .variant,
                [
                    DBusDictionaryEntry(.string("Address"), .variant(.string("C4:7C:8D:6A:11:22"))),
                    DBusDictionaryEntry(.string("RSSI"), .variant(.int16(-60))),
                    DBusDictionaryEntry(.string("UUIDs"), .variant(.array(.string, [.string("180d")]))),
                    DBusDictionaryEntry(
                        .string("ManufacturerData"),
                        .variant(
                            .dictionary(
                                key: .uint16, value: .variant,
                                [DBusDictionaryEntry(.uint16(0x4C), .variant(.bytes(Data([2, 21]))))]))),
                ])
        ],
        [.dictionary(key: .string, value: .variant, []), .dictionary(key: .byte, value: .int64, [])],
        [
            .dictionary(
                key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                [
                    DBusDictionaryEntry(
                        .objectPath(path),
                        .dictionary(
                            key: .string, value: .dictionary(key: .string, value: .variant),
                            [
                                DBusDictionaryEntry(
                                    .string("org.bluez.Device1"),
                                    .dictionary(
                                        key: .string, value: .variant,
                                        [DBusDictionaryEntry(.string("Connected"), .variant(.boolean(true)))]))
                            ]))
                ])
        ],
        [.dictionary(key: .int64, value: .double, [DBusDictionaryEntry(.int64(-1), .double(2))]), .byte(1)],
    ]

    @Test("every body reads as libdbus's iterators read it", arguments: bodies.indices)
    func sameAsIterators(index: Int) throws {
        let raw = try Self.received(Self.bodies[index])
        defer { dbus_message_unref(raw) }
        let wire = try #require(Self.wireBody(raw))
        #expect("\(wire)" == "\(Self.bodies[index])")
        #expect("\(wire)" == "\(try MessageDecoder.decodeBodyThroughIterators(raw))")
    }

    @Test("InterfacesAdded and PropertiesChanged read as the iterators read them")
    func signalReaders() throws {
        let known = [InterfaceName(unchecked: "org.bluez.Device1")]
        let properties: DBusValue = .dictionary(
            key: .string, value: .variant,
            [
                DBusDictionaryEntry(.string("Name"), .variant(.string("HRM"))),
                DBusDictionaryEntry(.string("ServicesResolved"), .variant(.boolean(false))),
                DBusDictionaryEntry(.string("Class"), .variant(.variant(.uint32(7)))),
            ])
        let added = try Self.received([
            .objectPath(Self.path),
            .dictionary(
                key: .string, value: .dictionary(key: .string, value: .variant),
                [
                    DBusDictionaryEntry(.string("org.bluez.Device1"), properties),
                    DBusDictionaryEntry(
                        .string("org.freedesktop.DBus.Properties"), .dictionary(key: .string, value: .variant, [])),
                    DBusDictionaryEntry(.string("org.example.Other1"), properties),
                ]),
        ])
        defer { dbus_message_unref(added) }
        let signal = ReceivedSignal(raw: added)
        let wireRead = signal.interfacesAdded(known: known)
        let iteratorRead = signal.interfacesAddedThroughIterators(known: known)
        let wire = try #require(wireRead)
        let iterated = try #require(iteratorRead)
        #expect(wire.path == iterated.path)
        #expect(wire.interfaces == iterated.interfaces)
        #expect(wire.interfaces.keys.count == 3)
        #expect(wire.interfaces[known[0]]?["Class"] == .variant(.uint32(7)), "one variant level is taken off")

        let changed = try Self.received([.string("org.bluez.Device1"), properties, .array(.string, [.string("RSSI")])])
        defer { dbus_message_unref(changed) }
        let change = ReceivedSignal(raw: changed)
        let wireChange = change.propertiesChanged(known: known)
        let iteratorChange = change.propertiesChangedThroughIterators(known: known)
        let read = try #require(wireChange)
        let readByIterators = try #require(iteratorChange)
        #expect(read.interface == readByIterators.interface)
        #expect(read.changed == readByIterators.changed)
        #expect(read.invalidated == ["RSSI"])
        #expect(read.invalidated == readByIterators.invalidated)
    }

    @Test("a value change (notification, read echo) is told from every other shape, as the whole decoding reads it")
    func changedBytesAgree() throws {
        func changed(_ interface: String, _ entries: [(String, DBusValue)], invalidated: [String] = []) -> [DBusValue] {
            [
                .string(interface),
                .dictionary(
                    key: .string, value: .variant, entries.map { DBusDictionaryEntry(.string($0.0), .variant($0.1)) }),
                .array(.string, invalidated.map { .string($0) }),
            ]
        }
        let widget = "org.example.Widget1"
        let bodies: [([DBusValue], Data?)] = [
            (changed(widget, [("Value", .bytes(Data([1, 2, 3])))]), Data([1, 2, 3])),
            (changed(widget, [("Value", .bytes(Data()))]), Data()),
            (
                changed(widget, [("Value", .bytes(Data((0..<512).map { UInt8($0 & 0xff) })))]),
                Data((0..<512).map { UInt8($0 & 0xff) })
            ),
            // Not a value change: nil, from both.
            (changed(widget, [("Value", .bytes(Data([1]))), ("Other", .uint32(1))]), nil),
            (changed(widget, [("Other", .uint32(1)), ("Value", .bytes(Data([1])))]), nil),
            (changed(widget, [("Value", .bytes(Data([1])))], invalidated: ["Flags"]), nil),
            (changed(widget, []), nil),
            (changed(widget, [], invalidated: ["Value"]), nil),
            (changed("org.example.Widget2", [("Value", .bytes(Data([1])))]), nil),
            (changed("org.example.Widget", [("Value", .bytes(Data([1])))]), nil),
            (changed(widget, [("Valu", .bytes(Data([1])))]), nil),
            (changed(widget, [("ValueX", .bytes(Data([1])))]), nil),
            (changed(widget, [("Value", .string("text"))]), nil),
            (changed(widget, [("Value", .array(.int32, [.int32(1)]))]), nil),
            ([.string(widget), .string("Value")], nil),
            ([.string(widget)], nil),
        ]
        for (body, expected) in bodies {
            let raw = try Self.received(body)
            defer { dbus_message_unref(raw) }
            let signal = ReceivedSignal(raw: raw)
            let interface = InterfaceName(unchecked: widget)
            #expect(signal.changedBytes(interface: interface, property: "Value") == expected, "\(body)")
            // The whole decoding agrees: a value change is one `Value` of bytes of the
            // interface, nothing invalidated.
            let general = signal.propertiesChanged(known: [interface])
            if let general, general.interface == interface, general.invalidated.isEmpty, general.changed.count == 1,
                case .bytes(let bytes)? = general.changed["Value"]
            {
                #expect(bytes == expected, "\(body)")
            } else {
                #expect(expected == nil, "\(body)")
            }
            // Read once for both questions: the value when it is one, else the whole change.
            switch signal.propertiesChange(loneBytesOf: interface, property: "Value", known: [interface]) {
            case .loneBytes(let bytes):
                #expect(bytes == expected, "\(body)")
            case .changed(let name, let changedProperties, let invalidated):
                #expect(expected == nil, "\(body)")
                #expect(name == general?.interface, "\(body)")
                #expect(changedProperties == general?.changed, "\(body)")
                #expect(invalidated == general?.invalidated, "\(body)")
            case nil:
                #expect(expected == nil && general == nil, "\(body)")
            }
        }
    }

    @Test("a big-endian message reads as a little-endian one does")
    func bigEndian() throws {
        // A signal whose body is a{sv} = {"n": variant uint32 0x01020304, "s": variant string "ok"},
        // written out in big-endian byte order.
        var body: [UInt8] = []
        func pad(_ alignment: Int) { while body.count % alignment != 0 { body.append(0) } }
        func word(_ value: UInt32) {
            pad(4)
            body += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        }
        func string(_ text: String) {
            word(UInt32(text.utf8.count))
            body += Array(text.utf8) + [0]
        }
        word(0)  // the array's length, set below
        pad(8)
        let start = body.count
        string("n")
        body += [1, UInt8(ascii: "u"), 0]
        word(0x0102_0304)
        pad(8)
        string("s")
        body += [1, UInt8(ascii: "s"), 0]
        string("ok")
        let length = UInt32(body.count - start)
        body.replaceSubrange(
            0..<4,
            with: [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)])

        var fields: [UInt8] = []
        func field(_ code: UInt8, _ signature: Character, _ text: String) {
            while fields.count % 8 != 0 { fields.append(0) }
            fields += [code, 1, String(signature).utf8.first!, 0]
            if signature == "g" {
                fields += [UInt8(text.utf8.count)] + Array(text.utf8) + [0]
            } else {
                let count = UInt32(text.utf8.count)
                fields += [
                    UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff),
                ]
                fields += Array(text.utf8) + [0]
            }
        }
        field(1, "o", Self.path.rawValue)
        field(2, "s", Self.interface.rawValue)
        field(3, "s", Self.member.rawValue)
        field(8, "g", "a{sv}")
        var message: [UInt8] = [UInt8(ascii: "B"), 4, 0, 1]
        let bodyLength = UInt32(body.count)
        let fieldsLength = UInt32(fields.count)
        message += [
            UInt8(bodyLength >> 24), UInt8(bodyLength >> 16 & 0xff), UInt8(bodyLength >> 8 & 0xff),
            UInt8(bodyLength & 0xff),
        ]
        message += [0, 0, 0, 7]
        message += [
            UInt8(fieldsLength >> 24), UInt8(fieldsLength >> 16 & 0xff), UInt8(fieldsLength >> 8 & 0xff),
            UInt8(fieldsLength & 0xff),
        ]
        message += fields
        while message.count % 8 != 0 { message.append(0) }
        message += body

        let raw = try Self.received(wire: message)
        defer { dbus_message_unref(raw) }
        let expected: [DBusValue] = [
            .dictionary(
                key: .string, value: .variant,
                [
                    DBusDictionaryEntry(.string("n"), .variant(.uint32(0x0102_0304))),
                    DBusDictionaryEntry(.string("s"), .variant(.string("ok"))),
                ])
        ]
        #expect(Self.wireBody(raw) == expected)
        #expect(try MessageDecoder.decodeBodyThroughIterators(raw) == expected)
    }

    @Test("a body with a file descriptor is left to the iterators, which read it")
    func fileDescriptorsFallBack() throws {
        let descriptor = try FileDescriptor(duplicating: 0)
        let message = DBusMessage(
            kind: .signal, path: Self.path, interface: Self.interface, member: Self.member,
            body: [.dictionary(key: .string, value: .unixFD, [DBusDictionaryEntry(.string("fd"), .unixFD(descriptor))])]
        )
        let raw = try MessageEncoder.encode(message)
        defer { dbus_message_unref(raw) }
        #expect(Self.wireBody(raw) == nil, "libdbus does not marshal a message with descriptors")
        let body = try MessageDecoder.decodeBody(raw)
        guard case .dictionary(_, _, let entries)? = body.first, case .unixFD? = entries.first?.value else {
            Issue.record("decoded \(body)")
            return
        }
    }
}
