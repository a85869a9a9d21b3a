import BlueZ
import DBus
import Foundation
import Synchronization

/// A passive scan's advertisement monitor: an object-manager root exported on the central's
/// connection with one `AdvertisementMonitor1` below it, registered with the adapter's
/// `AdvertisementMonitorManager1` (`RegisterMonitor`). bluetoothd then reports matching
/// advertisers without discovery: it creates and updates their device objects, which the scan
/// reports as an active one does, and calls `DeviceFound` for each one first matched.
final class PassiveScanMonitor: Sendable {
    private static let nextRoot = Atomic<UInt64>(0)
    private static let objectPathArgument = (try? Signature("o")) ?? .empty

    private let root: ObjectPath
    private let monitorPath: ObjectPath
    private let session: BlueZSession
    private let adapterPath: ObjectPath

    private init(root: ObjectPath, monitorPath: ObjectPath, session: BlueZSession, adapterPath: ObjectPath) {
        self.root = root
        self.monitorPath = monitorPath
        self.session = session
        self.adapterPath = adapterPath
    }

    /// Exports and registers a monitor for `request`'s services, reporting each device
    /// bluetoothd says it found to `observer`.
    ///
    /// - Throws: ``BLEError/Code/invalidArguments`` without services to match;
    ///   ``BLEError/Code/notSupported`` when bluetoothd offers no advertisement monitors (it
    ///   does only when started with `--experimental`); the registration's error otherwise.
    static func start(
        _ request: ScanRequest, adapterName: String, adapterPath: ObjectPath, session: BlueZSession,
        observer: ScanObserver, timeout: Duration
    ) async throws(BLEError) -> PassiveScanMonitor {
        let patterns = PassiveScanPatterns.patterns(for: request.services)
        guard !patterns.isEmpty else {
            throw BLEError(
                .invalidArguments,
                message: "a passive scan needs the services to look for: BlueZ's monitors match advertisement patterns")
        }
        let offered = session.read {
            $0.contains(adapterPath, implementing: BlueZInterface.advertisementMonitorManager1)
        }
        guard offered else {
            throw BLEError(
                .notSupported,
                message: "\(adapterName) offers no advertisement monitors (AdvertisementMonitorManager1): passive "
                    + "scanning needs bluetoothd started with --experimental (-E), and a kernel that has them")
        }
        let number = nextRoot.add(1, ordering: .relaxed).newValue
        guard let root = try? ObjectPath("/org/swift_ble/monitor\(number)"), let path = try? root.appending("scan")
        else {
            throw BLEError(.failed, message: "no object path for the monitor")
        }
        let monitor = PassiveScanMonitor(root: root, monitorPath: path, session: session, adapterPath: adapterPath)
        try monitor.export(AdvertisementMonitorProperties(patterns: patterns), observer: observer)
        do throws(BLEError) {
            _ = try await session.call(
                adapterPath, BlueZInterface.advertisementMonitorManager1, BlueZMethod.registerMonitor,
                [.objectPath(root)], timeout: timeout)
        } catch {
            // A registration that failed late (cancelled, timed out) may have been taken all
            // the same: unregistered best-effort, from a task that is not cancelled.
            await Task(executorPreference: session.connection.executor) { await monitor.stop() }.value
            throw error
        }
        return monitor
    }

    private func export(_ properties: AdvertisementMonitorProperties, observer: ScanObserver) throws(BLEError) {
        // bluetoothd's calls are [noreply]: they are taken, never answered with an error.
        let ignored: @Sendable (DBusMessage) -> [DBusValue] = { _ in [] }
        let found = ExportedMethod.immediate(BlueZMethod.deviceFound, in: Self.objectPathArgument) {
            [weak observer] call in
            if case .objectPath(let device)? = call.body.first { observer?.deviceFound(device) }
            return []
        }
        let methods = [
            ExportedMethod.immediate(BlueZMethod.release, handler: ignored),
            ExportedMethod.immediate(BlueZMethod.activate, handler: ignored), found,
            ExportedMethod.immediate(BlueZMethod.deviceLost, in: Self.objectPathArgument, handler: ignored),
        ]
        let exported = properties.dbusProperties.sorted { $0.key < $1.key }.map {
            ExportedProperty($0.key, value: $0.value)
        }
        session.connection.addObjectManager(at: root)
        do throws(DBusError) {
            try session.connection.export(
                [
                    ExportedInterface(
                        BlueZInterface.advertisementMonitor1, methods: methods, properties: exported,
                        acceptedSender: BlueZService.busName)
                ], at: monitorPath)
        } catch {
            throw BLEError(error)
        }
    }

    private func unexport() {
        session.connection.unexport(monitorPath)
        session.connection.removeObjectManager(at: root)
    }

    /// Unregisters the monitor (bluetoothd gone, or the adapter with it: nothing to undo
    /// there) and removes its objects.
    func stop() async {
        _ = try? await session.call(
            adapterPath, BlueZInterface.advertisementMonitorManager1, BlueZMethod.unregisterMonitor,
            [.objectPath(root)], timeout: session.callTimeout)
        unexport()
    }
}
