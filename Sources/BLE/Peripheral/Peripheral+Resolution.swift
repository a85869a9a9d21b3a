import BlueZ
import DBus

extension Peripheral {
    /// Calls `Device1.Connect` and waits until the device is connected, resolved and its GATT
    /// objects are mirrored.
    ///
    /// The call and the resolution race: BlueZ answers Connect when the ATT socket is up (Q2),
    /// usually before resolution, but under load the reply can come late while the device is
    /// already resolved; what counts is the device's state. A failed Connect before resolution
    /// fails the attempt. The wait has a stream of its own: cancelling it ends that stream,
    /// and the caller's stays intact for what it checks after a failure.
    static func connectAndResolve(
        session: BlueZSession, device: ObjectPath, timeout: Duration
    ) async throws(BLEError) {
        let events = session.events(under: device)
        let outcome: BLEError? = await withTaskGroup(of: Step.self) { group in
            group.addTask {
                do throws(BLEError) {
                    _ = try await session.call(device, BlueZInterface.device1, BlueZMethod.connect, timeout: timeout)
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
            while let step = await group.next() {
                switch step {
                case .connectAnswered: continue
                case .resolved:
                    group.cancelAll()
                    return nil
                case .failed(let error):
                    group.cancelAll()
                    return error
                }
            }
            return BLEError.cancelledByTask
        }
        if let outcome { throw outcome }
        await session.completeSubtree(under: device)
    }

    private enum Step: Sendable {
        case connectAnswered, resolved
        case failed(BLEError)
    }

    /// Waits until the device is connected and resolved (Q1, Q2).
    static func waitResolved(
        session: BlueZSession, device: ObjectPath, events: AsyncStream<SessionEvent>
    ) async throws(BLEError) {
        func check() throws(BLEError) -> Bool {
            guard let properties = try? session.tree.device(at: device) else {
                throw BLEError(.notFound, message: "the device vanished while connecting")
            }
            return properties.connected && properties.servicesResolved
        }
        if try check() { return }
        for await event in events {
            if case .daemonGone = event { throw BLEError.bluetoothGone }
            if try check() { return }
        }
        throw BLEError.cancelledByTask
    }
}
