/// What a notification iteration that falls behind gives up once its buffer
/// (``CentralOptions/notificationBufferSize``) is full.
public enum NotificationBufferPolicy: Sendable, Hashable {
    /// Keep what is buffered, drop the values that arrive: the reader sees an unbroken run of
    /// the oldest ones (a log, a transfer that must not skip ahead). The default.
    case dropNewest
    /// Make room by dropping the oldest buffered value: the reader catches up to the latest
    /// ones (a live reading, where only recent values matter).
    case dropOldest
}
