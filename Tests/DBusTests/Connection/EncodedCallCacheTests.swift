import CDBus
import Foundation
import Testing

@testable import DBus

/// The I/O loop's cache of encoded calls: a call of a shape seen before is a copy of the kept
/// message with its byte arrays overwritten, and decodes exactly as the call itself would;
/// calls that differ anywhere else are never confused.
@Suite struct EncodedCallCacheTests {
    static let characteristic = "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010/char0011"

    static func write(_ bytes: [UInt8], type: String = "request", path: String = characteristic, tail: [UInt8]? = nil)
        throws -> DBusMessage
    {
        var body: [DBusValue] = [
            .bytes(Data(bytes)),
            .dictionary(
                key: .string, value: .variant, [DBusDictionaryEntry(.string("type"), .variant(.string(type)))]),
        ]
        if let tail { body.append(.bytes(Data(tail))) }
        return DBusMessage(
            kind: .methodCall, path: try ObjectPath(path),
            interface: try InterfaceName("org.bluez.GattCharacteristic1"),
            member: try MemberName("WriteValue"), destination: try BusName("org.bluez"), body: body)
    }

    /// What libdbus holds in `raw`, decoded (and `raw` released).
    static func decoded(_ raw: OpaquePointer) throws -> DBusMessage {
        defer { dbus_message_unref(raw) }
        return try MessageDecoder.decode(raw)
    }

    static func expectSame(_ raw: OpaquePointer, as message: DBusMessage) throws {
        let result = try decoded(raw)
        #expect(result.body == message.body)
        #expect(result.path == message.path)
        #expect(result.interface == message.interface)
        #expect(result.member == message.member)
        #expect(result.destination == message.destination)
        // (libdbus flags every signal as expecting no reply.)
        if message.kind == .methodCall { #expect(result.noReplyExpected == message.noReplyExpected) }
    }

    @Test("a repeated call carries its own bytes, from one kept message")
    func patchedBytes() throws {
        var cache = EncodedCallCache()
        for round in 0..<5 {
            let message = try Self.write((0..<20).map { UInt8(truncatingIfNeeded: $0 * 7 + round) })
            try Self.expectSame(try cache.encode(message), as: message)
        }
        #expect(cache.count == 1)
    }

    @Test("byte arrays after other arguments are patched too")
    func secondByteArray() throws {
        var cache = EncodedCallCache()
        let first = try Self.write([1, 2, 3], tail: [9, 9])
        let second = try Self.write([4, 5, 6], tail: [7, 8])
        try Self.expectSame(try cache.encode(first), as: first)
        try Self.expectSame(try cache.encode(second), as: second)
        #expect(cache.count == 1)
    }

    @Test("another length, option, path or flag is another shape")
    func shapesApart() throws {
        var cache = EncodedCallCache()
        var noReply = try Self.write([1, 2])
        noReply.noReplyExpected = true
        let calls = [
            try Self.write([1, 2]), try Self.write([1, 2, 3]), try Self.write([1, 2], type: "command"),
            try Self.write([1, 2], path: "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010/char0014"), noReply,
            try Self.write([]),
        ]
        for message in calls + calls.reversed() {
            try Self.expectSame(try cache.encode(message), as: message)
        }
        #expect(cache.count == calls.count)
    }

    @Test("signals and calls passing file descriptors are encoded afresh each time")
    func notKept() throws {
        var cache = EncodedCallCache()
        let signal = DBusMessage(
            kind: .signal, path: try ObjectPath("/a"), interface: try InterfaceName("org.example.A"),
            member: try MemberName("Changed"), body: [.bytes(Data([1]))])
        try Self.expectSame(try cache.encode(signal), as: signal)
        let descriptor = try FileDescriptor(duplicating: 1)
        let passing = DBusMessage(
            kind: .methodCall, path: try ObjectPath("/a"), member: try MemberName("Take"),
            body: [.variant(.unixFD(descriptor))])
        dbus_message_unref(try cache.encode(passing))
        #expect(cache.count == 0)
    }

    @Test("large byte arrays are not kept")
    func largeNotKept() throws {
        var cache = EncodedCallCache()
        let message = try Self.write(Array(repeating: 0xAB, count: EncodedCallCache.largestKeptBytes + 1))
        try Self.expectSame(try cache.encode(message), as: message)
        #expect(cache.count == 0)
    }

    @Test("the cache stays within its capacity and every call still decodes as itself")
    func bounded() throws {
        var cache = EncodedCallCache()
        for length in 0..<(EncodedCallCache.capacity * 2) {
            let message = try Self.write(Array(repeating: UInt8(length), count: length))
            try Self.expectSame(try cache.encode(message), as: message)
            #expect(cache.count <= EncodedCallCache.capacity)
        }
    }

    @Test("an invalid call is still refused with a typed error")
    func invalidRefused() throws {
        var cache = EncodedCallCache()
        let bad = DBusMessage(
            kind: .methodCall, path: try ObjectPath("/a"), member: try MemberName("M"), body: [.string("a\u{0}b")])
        let error = #expect(throws: DBusError.self) { try cache.encode(bad) }
        #expect(error?.code == .invalidValue)
        #expect(cache.count == 0)
    }
}
