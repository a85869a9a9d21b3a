import CDBus
import Foundation

/// Method calls encoded lately, kept as libdbus messages to copy: the I/O thread's shortcut
/// past ``MessageEncoder`` for the calls a client repeats (a characteristic's reads and writes).
///
/// Building a body through libdbus's iterators costs microseconds per container, because each
/// top-level argument reads and rewrites the header's signature field; a write's `ay a{sv}`
/// body cost more than the rest of its client-side work together. Copying a built message is
/// two `memcpy`s. A call is served from the cache when it differs from one encoded before at
/// most in the bytes of its top-level byte arrays, at the same lengths: those bytes are then
/// overwritten in the copy, which moves no offset and no length. Everything else in the call
/// was validated when the kept one was encoded, so nothing is validated again.
///
/// Owned by one I/O loop and used on its thread only.
struct EncodedCallCache {
    /// How many call shapes are kept; one more evicts an arbitrary one.
    static let capacity = 32
    /// Calls whose byte arrays hold more than this in all are not kept (memory stays bounded).
    static let largestKeptBytes = 1024

    private var templates: [Shape: Template] = [:]

    /// How many call shapes are kept now.
    var count: Int { templates.count }

    /// An owned libdbus message for `message` (the caller unrefs it): a patched copy of a kept
    /// one when its shape was seen before, else encoded (and kept, when it may be).
    mutating func encode(_ message: DBusMessage) throws(DBusError) -> OpaquePointer {
        let shape = Shape(message: message)
        if let template = templates[shape], let copy = template.instantiate(with: message.body) {
            return copy
        }
        let raw = try MessageEncoder.encode(message)
        guard Self.mayKeep(message), let kept = dbus_message_copy(raw) else { return raw }
        if templates.count >= Self.capacity, let victim = templates.keys.first {
            templates[victim] = nil
        }
        templates[shape] = Template(raw: kept, body: message.body)
        return raw
    }

    /// Drops every kept message.
    mutating func removeAll() { templates.removeAll() }

    /// Method calls only, without file descriptors (a copy would duplicate them) and with
    /// small byte arrays.
    private static func mayKeep(_ message: DBusMessage) -> Bool {
        guard message.kind == .methodCall else { return false }
        var bytes = 0
        for value in message.body {
            if case .bytes(let data) = value {
                bytes += data.count
            } else if value.holdsFileDescriptor {
                return false
            }
        }
        return bytes <= largestKeptBytes
    }

    /// A call's header and body, with the contents of its top-level byte arrays left out of
    /// equality (their lengths count).
    private struct Shape: Hashable {
        let message: DBusMessage
        /// A digest of what tells the usual calls apart (the path, the member, how many
        /// arguments, the byte arrays' lengths), made once per call. A look-up meets several
        /// kept shapes as it probes the table (about eight per call), and each was compared
        /// field by field, the paths' texts against each other; now a differing digest ends
        /// the comparison, and it is the hash too (no `Hasher` run per look-up).
        let digest: UInt64

        init(message: DBusMessage) {
            self.message = message
            var digest = message.path.map { NameHashing.digest($0.rawValue) } ?? 0
            digest = Self.mix(digest, message.member.map { NameHashing.digest($0.rawValue) } ?? 0)
            digest = Self.mix(digest, UInt64(message.body.count))
            for value in message.body {
                if case .bytes(let data) = value { digest = Self.mix(digest, UInt64(data.count)) }
            }
            self.digest = digest
        }

        private static func mix(_ state: UInt64, _ value: UInt64) -> UInt64 {
            let mixed = (state ^ value) &* 0x9E37_79B9_7F4A_7C15
            return mixed ^ (mixed >> 29)
        }

        // Field by field, without taking a copy of either message (a copy retains every
        // string in it, and a look-up compares on every write).
        static func == (lhs: Shape, rhs: Shape) -> Bool {
            guard
                lhs.digest == rhs.digest, lhs.message.kind == rhs.message.kind,
                lhs.message.path == rhs.message.path, lhs.message.member == rhs.message.member,
                lhs.message.interface == rhs.message.interface,
                lhs.message.destination == rhs.message.destination,
                lhs.message.noReplyExpected == rhs.message.noReplyExpected,
                lhs.message.replySerial == rhs.message.replySerial, lhs.message.errorName == rhs.message.errorName,
                lhs.message.body.count == rhs.message.body.count
            else { return false }
            for index in lhs.message.body.indices {
                switch (lhs.message.body[index], rhs.message.body[index]) {
                case (.bytes(let first), .bytes(let second)):
                    if first.count != second.count { return false }
                case (let x, let y):
                    if x != y { return false }
                }
            }
            return true
        }

        func hash(into hasher: inout Hasher) { hasher.combine(digest) }

        /// What the table hashes with: the digest and its seed (see ``NameHashing``).
        func _rawHashValue(seed: Int) -> Int { NameHashing.rawHash(digest, seed: seed) }
    }

    /// One kept message and where its byte arrays are.
    private final class Template {
        let raw: OpaquePointer
        /// Indices of the top-level byte arrays, ascending.
        let patched: [Int]

        init(raw: OpaquePointer, body: [DBusValue]) {
            self.raw = raw
            self.patched = body.indices.filter { index in
                if case .bytes = body[index] { return true }
                return false
            }
        }

        deinit { dbus_message_unref(raw) }

        /// A copy carrying `body`'s bytes, or nil when libdbus is out of memory or the copy's
        /// layout is not the one expected (then the call is encoded afresh).
        func instantiate(with body: [DBusValue]) -> OpaquePointer? {
            guard let copy = dbus_message_copy(raw) else { return nil }
            if patched.isEmpty { return copy }
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(copy, &iter) != 0 else {
                dbus_message_unref(copy)
                return nil
            }
            var position = 0
            for index in patched {
                while position < index {
                    dbus_message_iter_next(&iter)
                    position += 1
                }
                guard case .bytes(let data) = body[index], overwrite(&iter, with: data) else {
                    dbus_message_unref(copy)
                    return nil
                }
            }
            return copy
        }

        /// Writes `data` over the byte array at `iter`. The copy is ours alone and not yet
        /// locked (it has never been sent); libdbus hands out fixed arrays as a pointer into
        /// the body, so the bytes are replaced where they lie.
        private func overwrite(_ iter: inout DBusMessageIter, with data: Data) -> Bool {
            guard dbus_message_iter_get_arg_type(&iter) == TypeCode.array,
                dbus_message_iter_get_element_type(&iter) == TypeCode.byte
            else { return false }
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            var pointer: UnsafeMutableRawPointer?
            var count: Int32 = 0
            dbus_message_iter_get_fixed_array(&inner, &pointer, &count)
            guard Int(count) == data.count else { return false }
            guard let pointer, count > 0 else { return true }
            data.copyBytes(to: pointer.assumingMemoryBound(to: UInt8.self), count: data.count)
            return true
        }
    }
}

extension DBusValue {
    /// Whether a file descriptor (`h`) is in this value, at any depth.
    fileprivate var holdsFileDescriptor: Bool {
        switch self {
        case .unixFD: true
        case .array(_, let elements), .structure(let elements): elements.contains { $0.holdsFileDescriptor }
        case .dictionary(_, _, let entries):
            entries.contains { $0.key.holdsFileDescriptor || $0.value.holdsFileDescriptor }
        case .variant(let inner): inner.holdsFileDescriptor
        default: false
        }
    }
}
