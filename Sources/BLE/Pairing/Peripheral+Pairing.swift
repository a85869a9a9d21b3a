import BlueZ
import DBus

extension Peripheral {
    /// Whether BlueZ holds a bond (keys) for this peripheral (`Device1.Paired`).
    public var isPaired: Bool { (try? session.tree.device(at: devicePath))??.paired ?? false }

    /// Whether BlueZ trusts this peripheral (`Device1.Trusted`): a trusted device's requests
    /// are authorized without asking the pairing handler.
    public var isTrusted: Bool { (try? session.tree.device(at: devicePath))??.trusted ?? false }

    /// Pairs and bonds with the peripheral (`Device1.Pair`), asking the central's
    /// ``PairingHandler`` whatever the method needs. Connects first when the link is down.
    /// Concurrent calls share one pairing (and the first call's deadline).
    ///
    /// Succeeds at once when the peripheral is already paired (BlueZ's `AlreadyExists` is
    /// success too). Cancelling the task, or the deadline passing, cancels the pairing
    /// (`Device1.CancelPairing`, sent only while the `Pair` call is outstanding: without a
    /// pairing in progress BlueZ would delete the bond instead).
    ///
    /// - Parameter timeout: for connecting and pairing together; nil uses
    ///   ``CentralOptions/pairTimeout``. Leave the user time to type a passkey.
    /// - Throws: ``BLEError/Code/authenticationFailed`` (wrong passkey, refused confirmation,
    ///   the peripheral demands a method this device's capability cannot do, or it refused to
    ///   pair), ``BLEError/Code/timeout`` (ours, or BlueZ's `AuthenticationTimeout`),
    ///   ``BLEError/Code/cancelled`` (the task, or someone else cancelled, or the link dropped),
    ///   ``BLEError/Code/connectionFailed``; ``BLEError/dbusErrorName`` keeps BlueZ's name.
    public func pair(timeout: Duration? = nil) async throws(BLEError) {
        if isPaired { return }
        let attempt: SharedAttempt<Void>
        if let existing = pairAttempt {
            attempt = existing
        } else {
            attempt = SharedAttempt(
                Task(executorPreference: session.connection.executor) {
                    do throws(BLEError) {
                        return .success(try await self.performPair(timeout: timeout))
                    } catch {
                        return .failure(error)
                    }
                })
            pairAttempt = attempt
        }
        let result = await attempt.join(diagnostics: session.diagnostics, executor: session.connection.executor)
        if pairAttempt === attempt, !Task.isCancelled || !attempt.isWaitedFor { pairAttempt = nil }
        try result.get()
    }

    private func performPair(timeout: Duration?) async throws(BLEError) {
        guard let central else { throw BLEError(.failed, message: "the central that made this peripheral is gone") }
        let limit = timeout ?? central.options.pairTimeout
        let start = ContinuousClock.now
        if connectionState != .connected { try await connectLink(timeout: limit) }
        if isPaired { return }
        try await central.pairingAgent.register()
        let remaining = limit - (ContinuousClock.now - start)
        guard remaining > .zero else { throw BLEError.timeout("pairing") }
        let events = session.events(under: devicePath)
        defer { events.cancel() }
        do {
            _ = try await session.call(devicePath, BlueZInterface.device1, BlueZMethod.pair, timeout: remaining)
        } catch {
            if error.dbusErrorName == BlueZErrorName.alreadyExists { return }
            // Our own cancel or deadline leaves BlueZ's pairing running: cancel it. BlueZ's own
            // endings (named org.bluez.Error.*) need nothing more.
            let ourCancel = Task.isCancelled && error.code == .cancelled
            let ourDeadline = error.code == .timeout && !BlueZErrorName.isBlueZError(error.dbusErrorName ?? "")
            if ourCancel || ourDeadline { await cancelPairing() }
            if ourCancel { throw BLEError.cancelledByTask }
            throw error
        }
        let devicePath = self.devicePath
        await session.settle(events) { (try? $0.device(at: devicePath))??.paired == true }
    }

    /// Sends `CancelPairing` from a task of its own (a cancelled task sends no calls), bounded.
    private func cancelPairing() async {
        let session = self.session
        let devicePath = self.devicePath
        let limit = min(session.callTimeout, .seconds(5))
        await Task(executorPreference: session.connection.executor) {
            _ = try? await session.call(
                devicePath, BlueZInterface.device1, BlueZMethod.cancelPairing, timeout: limit)
        }.value
    }

    /// Trusts the peripheral or stops trusting it (`Device1.Trusted`).
    public func setTrusted(_ trusted: Bool) async throws(BLEError) {
        _ = try await session.call(
            devicePath, .properties, BlueZMethod.set,
            [.string(BlueZInterface.device1.rawValue), .string("Trusted"), .variant(.boolean(trusted))])
    }
}
