import BlueZ
import DBus

extension Peripheral {
    /// Deadlines at least this long leave room for a second attempt after a stalled one.
    static let retryableConnectTimeout: Duration = .seconds(10)

    /// Calls `Device1.Connect` and waits until the device is connected, resolved and its GATT
    /// objects are mirrored.
    ///
    /// The call and the resolution race: BlueZ answers Connect when the ATT socket is up (Q2),
    /// usually before resolution, but under load the reply can come late while the device is
    /// already resolved; what counts is the device's state. A failed Connect before resolution
    /// fails the attempt.
    ///
    /// bluetoothd 5.66 can answer Connect with the link up but never signal `Connected=true`
    /// (its ATT socket came up before the kernel's connection event reached it): the answer,
    /// or `ServicesResolved=true` on a device the mirror thinks disconnected, makes the session
    /// re-read the device (``BlueZSession/refreshProperties(at:interface:)``). Should a link
    /// still not resolve, with a deadline of 10 s or more an attempt that has not resolved by
    /// half the deadline is disconnected and made once more.
    static func connectAndResolve(
        session: BlueZSession, device: ObjectPath, timeout: Duration
    ) async throws(BLEError) {
        let start = ContinuousClock.now
        let retry = timeout >= retryableConnectTimeout
        let first = await attempt(session: session, device: device, timeout: timeout, grace: retry ? timeout / 2 : nil)
        switch first {
        case .resolved: break
        case .failed(let error): throw error
        case .stalled, .connectAnswered:
            let state = (try? session.tree.device(at: device)).flatMap { $0 }
            session.logger.log(
                .info, "the link did not resolve; connecting once more",
                metadata: [
                    "device": device.rawValue, "connected": "\(state?.connected ?? false)",
                    "servicesResolved": "\(state?.servicesResolved ?? false)",
                ])
            _ = try? await session.call(device, BlueZInterface.device1, BlueZMethod.disconnect, timeout: .seconds(5))
            let remaining = timeout - (ContinuousClock.now - start)
            guard remaining > .zero else { throw BLEError(.timeout, message: "connecting timed out") }
            switch await attempt(session: session, device: device, timeout: remaining, grace: nil) {
            case .resolved: break
            case .failed(let error): throw error
            case .stalled, .connectAnswered: throw BLEError(.timeout, message: "connecting timed out")
            }
        }
        await session.refreshResolvedDevice(device)
    }

    private enum Step: Sendable {
        case connectAnswered, resolved, stalled
        case failed(BLEError)
    }

    /// One Connect raced with the resolution (and, given a grace period, with a stall timer).
    private static func attempt(
        session: BlueZSession, device: ObjectPath, timeout: Duration, grace: Duration?
    ) async -> Step {
        // A stream of its own: cancelling the wait ends it, and the caller's stays intact.
        let events = session.events(under: device)
        return await withTaskGroup(of: Step.self) { group in
            group.addTask {
                do throws(BLEError) {
                    _ = try await session.call(device, BlueZInterface.device1, BlueZMethod.connect, timeout: timeout)
                    if (try? session.tree.device(at: device))??.connected == false {
                        // Answered, so bluetoothd holds the link; the mirror may have missed it.
                        await session.refreshProperties(at: device, interface: BlueZInterface.device1)
                    }
                    return .connectAnswered
                } catch {
                    return .failed(error)
                }
            }
            group.addTask {
                do throws(BLEError) {
                    try await waitResolved(session: session, device: device, events: events)
                    return .resolved
                } catch {
                    return .failed(error)
                }
            }
            if let grace {
                group.addTask {
                    // Timed by the bus connection's loop: no timer thread wakes for it.
                    do throws(DBusError) { try await session.connection.sleep(for: grace) } catch {
                        return .failed(error.code == .cancelled ? BLEError.cancelledByTask : BLEError(error))
                    }
                    return .stalled
                }
            }
            while let step = await group.next() {
                if case .connectAnswered = step { continue }
                group.cancelAll()
                return step
            }
            return .failed(BLEError.cancelledByTask)
        }
    }

    /// Waits until the device is connected and resolved (Q1, Q2).
    static func waitResolved(
        session: BlueZSession, device: ObjectPath, events: SessionEvents
    ) async throws(BLEError) {
        func check() throws(BLEError) -> Bool {
            // The two flags only, read where they are stored: this runs for every event of the
            // device while it connects, and decoding all its properties each time cost more.
            guard let properties = session.read({ $0.properties(at: device, interface: BlueZInterface.device1) })
            else {
                // The mirror is emptied as bluetoothd leaves, before the event says so.
                if !session.daemonStatus.present { throw BLEError.bluetoothGone }
                throw BLEError(.notFound, message: "the device vanished while connecting")
            }
            return properties[DeviceProperties.Key.connected] == .boolean(true)
                && properties[DeviceProperties.Key.servicesResolved] == .boolean(true)
        }
        if try check() { return }
        for await event in events {
            if case .daemonGone = event { throw BLEError.bluetoothGone }
            if try check() { return }
        }
        throw BLEError.cancelledByTask
    }
}
