extension Peripheral {
    /// Whether a write without response made now goes out at once (Core Bluetooth's
    /// `canSendWriteWithoutResponse`): the link is up, no operation waits its turn, and the
    /// writes without response in flight leave room in ``CentralOptions/writeWithoutResponseWindow``.
    ///
    /// A write made while this is false is not refused: it waits its turn in the peripheral's
    /// queue, its caller suspended (cancellable, within its deadline), instead of piling up at
    /// bluetoothd. Producers that would rather not wait watch
    /// ``readyToSendWriteWithoutResponse``.
    public nonisolated var canSendWriteWithoutResponse: Bool { client.acceptsWriteWithoutResponse }

    /// Yields each time ``canSendWriteWithoutResponse`` becomes true (Core Bluetooth's
    /// `peripheralIsReady(toSendWriteWithoutResponse:)`): when the link comes up, and when a
    /// full window or a queue of operations drains. A slow reader holds only the latest. Ends
    /// when the peripheral goes (its central closed or released).
    public nonisolated var readyToSendWriteWithoutResponse: AsyncStream<Void> { client.readiness.stream() }
}
