import Synchronization

/// Events many tasks observe, each subscriber holding the latest 64 when it falls behind.
final class EventBroadcast<Event: Sendable>: Sendable {
    private let subscribers = Mutex(SubscriberTable<Event>())
    private let diagnostics: BLEDiagnostics?

    init(diagnostics: BLEDiagnostics? = nil) { self.diagnostics = diagnostics }

    func yield(_ event: Event) {
        for subscriber in subscribers.withLock({ $0.all }) { subscriber.yield(event) }
    }

    func stream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = subscribers.withLock { $0.add(continuation) }
        diagnostics.follow(continuation, id: id) { [weak self] id in self?.subscribers.withLock { $0.remove(id) } }
        return stream
    }

    func finish() {
        for subscriber in subscribers.withLock({ $0.finish() }) { subscriber.finish() }
    }
}
