import DBus

extension GattClient {
    /// Takes up `channel`'s datagrams as values of the characteristic at `path` (see
    /// ``settleAcquired(_:)``).
    func addAcquiredChannel(_ channel: AcquiredNotifyChannel, for path: ObjectPath) {
        let added = acquiredChannels.withLock { channels -> Bool in
            defer { channels[path] = WeakAcquiredChannel(channel: channel) }
            return channels[path] == nil
        }
        if added { acquiredChannelCount.add(1, ordering: .relaxed) }
    }

    /// `channel` is gone: its newest datagram is noted first, so that the last value stays the
    /// newest one. A channel that replaced it for `path` stays.
    func removeAcquiredChannel(_ channel: AcquiredNotifyChannel, for path: ObjectPath) {
        channel.noteNewest { value in noteValue(path, value) }
        let removed = acquiredChannels.withLock { channels -> Bool in
            guard channels[path]?.channel === channel else { return false }
            channels[path] = nil
            return true
        }
        if removed { acquiredChannelCount.subtract(1, ordering: .relaxed) }
    }

    /// Notes the newest AcquireNotify datagram of `path` as its last value, if one came since
    /// the last time: before any other value of `path` is noted, and before the last value is
    /// read. A datagram is only kept by its channel as it arrives (noting each in the queue
    /// machine was a locked, hashed look-up per datagram, an eighth of what a datagram cost); the
    /// machine's lock is taken inside the channel's, so no datagram noted later overtakes it.
    func settleAcquired(_ path: ObjectPath) {
        guard acquiredChannelCount.load(ordering: .relaxed) > 0,
            let channel = acquiredChannels.withLock({ $0[path]?.channel })
        else { return }
        channel.noteNewest { value in noteValue(path, value) }
    }
}

/// An AcquireNotify channel as its client knows it.
struct WeakAcquiredChannel {
    weak var channel: AcquiredNotifyChannel?
}
