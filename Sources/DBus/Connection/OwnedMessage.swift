import CDBus

/// One reference to a libdbus message, held by whoever has this value: a reply or signal built
/// on any thread and handed to the I/O thread, which sends it and drops the reference; or a
/// received call kept by a ``MethodReply`` to build its return from.
///
/// `@unchecked` because `OpaquePointer` is not `Sendable`. Crossing threads is safe here:
/// libdbus counts references atomically, a built message is touched by one thread at a time
/// (its builder until it is queued, then the I/O thread, whose send stamps its serial), and a
/// received message is only read: libdbus locks a message once it arrives, after which nothing
/// writes it (building a return from it reads its header). A noncopyable type or a class with
/// a `deinit` would enforce the single release, but an array cannot hold the former and the
/// latter is an allocation per message on the read path. Copyable, so that it fits in the job queue's array: whoever
/// queues or keeps it gives up its own copy, and exactly one ``release()`` ends it.
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
