import CDBus

/// One reference to a libdbus message, held by whoever has this value: built on any thread
/// and handed to the I/O thread, which sends it and drops the reference.
///
/// Unchecked because libdbus counts references atomically and a message is never changed
/// once built; it is only sent, or read.
struct OwnedMessage: @unchecked Sendable {
    let raw: OpaquePointer

    /// Takes over a reference the caller owns (a message it created).
    init(adopting raw: OpaquePointer) {
        self.raw = raw
    }

    /// Takes a reference of its own to a message someone else owns.
    init(retaining raw: OpaquePointer) {
        self.raw = dbus_message_ref(raw)
    }

    /// Gives the reference back; the value must not be used afterwards.
    func release() {
        dbus_message_unref(raw)
    }
}
