/// A session listener's events in order (see ``BlueZSession/events(under:)``): an unbounded
/// ``EventBuffer`` that the I/O thread fills as signals are applied.
///
/// It ends as an `AsyncStream` would: when an iterator is released (a loop that breaks), when
/// the iterating task is cancelled, when the sequence is released without being iterated, or
/// by ``cancel()``; the listener is then unregistered.
struct SessionEvents: AsyncSequence, Sendable {
    typealias Element = SessionEvent
    typealias Failure = Never

    let consumer: EventConsumer<SessionEvent>

    /// Ends the listener from the consumer's side, iterated or not.
    func cancel() { consumer.buffer.terminate() }

    func makeAsyncIterator() -> Iterator { Iterator(shared: consumer, own: EventConsumer(consumer.buffer)) }

    /// Reads the events; releasing it ends the listener.
    struct Iterator: AsyncIteratorProtocol {
        /// Keeps the sequence's end from terminating the listener while this iterates.
        let shared: EventConsumer<SessionEvent>
        let own: EventConsumer<SessionEvent>

        mutating func next() async -> SessionEvent? { await own.buffer.next() }

        // No executor switch in or out, no retain per event (see
        // NotificationSequence.AsyncIterator).
        nonisolated(nonsending) func next(isolation actor: (any Actor)?) async -> SessionEvent? {
            await own.buffer.next()
        }
    }
}
