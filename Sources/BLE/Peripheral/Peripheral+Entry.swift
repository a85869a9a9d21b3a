import DBus

extension Peripheral: SessionObserver {
    /// The session closed (its central did): nothing more can come over its bus connection, so
    /// the link is down for this peripheral, its waiting operations fail and its notification
    /// iterations end, as when the bus goes for good, instead of waiting for values that can
    /// no longer come.
    nonisolated func sessionEnded() {
        enter { $0.endForGood(BLEError(.bluetoothUnavailable, message: "the central was closed")) }
    }

    /// A change of the device or its objects, from the session (see ``SessionObserver``).
    nonisolated func sessionEvent(_ event: SessionEvent) {
        enter(with: event) { $0.handle($1) }
    }

    /// Runs `handle(value)` on the actor, as ``enter(_:)`` runs its work. On the I/O thread,
    /// which is where every change and reply comes from, no closure is allocated: `handle`
    /// captures nothing, and `value` is captured only if the link's actions defer it.
    nonisolated func enter<Value: Sendable>(
        with value: Value, _ handle: @escaping @Sendable (isolated Peripheral, Value) -> Void
    ) {
        guard session.connection.executor.isCurrent else { return enter { handle($0, value) } }
        runIsolatedUnchecked { peripheral in
            guard !peripheral.isRunningLinkActions else {
                peripheral.deferredEntries.append { handle($0, value) }
                return
            }
            handle(peripheral, value)
        }
    }

    /// Runs `work` on the actor. The loop calls back (a reply, a signal, a wake-up) on its I/O
    /// thread, which is this actor's executor, between jobs: no job of the actor runs then, so
    /// the work runs at once, with no task spawned and no hop, and sees the mirror as it is at
    /// that message. Anywhere else (a connection closed already runs its callbacks on other
    /// threads) it goes through a task on the executor.
    ///
    /// Work brought back synchronously by one of the link's own actions (a call that fails
    /// before it is sent) waits until those actions are done (``runLink(_:)``), so the machine
    /// sees its events one at a time, in order.
    nonisolated func enter(_ work: @escaping @Sendable (isolated Peripheral) -> Void) {
        let executor = session.connection.executor
        guard executor.isCurrent else {
            Task(executorPreference: executor) { await self.run(work) }
            return
        }
        runIsolatedUnchecked { peripheral in peripheral.run(work) }
    }

    private func run(_ work: @escaping @Sendable (isolated Peripheral) -> Void) {
        guard !isRunningLinkActions else {
            deferredEntries.append(work)
            return
        }
        work(self)
    }
}
