import DBus
import Foundation
import Testing

/// Messages in wire format: what decodes re-encodes the same, and bytes that are no valid
/// message (invalid UTF-8 names, truncation, garbage) are a typed error, never a crash. The
/// bus daemon drops such messages before they reach a client; this is the same check for
/// bytes from anywhere else (the fuzzer, captures).
@Suite struct WireFormatTests {
    static func signal(name: String) throws -> DBusMessage {
        DBusMessage(
            kind: .signal, path: try ObjectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22"), interface: .properties,
            member: try MemberName("PropertiesChanged"), serial: 7,
            body: [
                .string("org.bluez.Device1"),
                .dictionary(
                    key: .string, value: .variant, [DBusDictionaryEntry(.string("Name"), .variant(.string(name)))]),
                .array(.string, []),
            ])
    }

    @Test func roundTrip() throws {
        let message = try Self.signal(name: "Heart Rate ♥")
        let decoded = try DBusMessage(wireFormat: try message.wireFormat())
        #expect(decoded.body == message.body)
        #expect(decoded.path == message.path)
        #expect(decoded.member == message.member)
        #expect(decoded.serial == 7)
    }

    @Test("a name with invalid UTF-8 is refused with a typed error")
    func invalidUTF8Name() throws {
        var bytes = try Self.signal(name: "ABCD").wireFormat()
        let at = try #require(
            bytes.indices.dropLast(3).first { bytes[$0..<($0 + 4)].elementsEqual(Array("ABCD".utf8)) })
        bytes.replaceSubrange(at..<(at + 4), with: [0xFF, 0xFE, 0xC0, 0x80])
        let error = #expect(throws: DBusError.self) { try DBusMessage(wireFormat: bytes) }
        #expect(error?.code == .invalidValue)
    }

    @Test("truncated and garbage bytes are refused with a typed error", arguments: [0, 1, 15, 16, 40])
    func truncated(length: Int) throws {
        let bytes = Array(try Self.signal(name: "ABCD").wireFormat().prefix(length))
        #expect(throws: DBusError.self) { try DBusMessage(wireFormat: bytes) }
        #expect(throws: DBusError.self) { try DBusMessage(wireFormat: bytes.map { $0 ^ 0x5A }) }
    }
}
