import CDBus
import Foundation

extension DBusMessage {
    /// Decodes a message from its D-Bus wire format (as captured from a bus, or a fuzzer's
    /// input). libdbus validates the bytes first, so malformed input is a thrown error.
    ///
    /// - Throws: ``DBusError`` with code ``DBusError/Code/invalidValue`` for bytes that are no
    ///   valid message.
    public init(wireFormat bytes: [UInt8]) throws(DBusError) {
        let failure = cdbus_error_new()
        defer { cdbus_error_delete(failure) }
        let raw = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                dbus_message_demarshal(chars.baseAddress, Int32(clamping: chars.count), failure)
            }
        }
        guard let raw else {
            let text = failure.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "not a D-Bus message"
            throw DBusError(.invalidValue, message: text)
        }
        defer { dbus_message_unref(raw) }
        self = try MessageDecoder.decode(raw)
    }

    /// The message in D-Bus wire format, in this machine's byte order (serial 1 when unset:
    /// the wire format has no serial 0).
    ///
    /// - Throws: ``DBusError`` when the message is invalid (see ``Connection/send(_:)``'s rules).
    public func wireFormat() throws(DBusError) -> [UInt8] {
        let raw = try MessageEncoder.encode(self)
        defer { dbus_message_unref(raw) }
        dbus_message_set_serial(raw, serial == 0 ? 1 : serial)
        var pointer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &pointer, &length) != 0, let pointer else {
            throw DBusError(.limitExceeded, message: "out of memory marshalling a message")
        }
        defer { dbus_free(pointer) }
        return UnsafeRawBufferPointer(start: pointer, count: Int(length)).map { $0 }
    }
}
