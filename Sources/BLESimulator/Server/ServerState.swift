import BlueZ
import DBus
import Foundation
import Glibc

/// The peripheral-role state of one daemon lifetime: registered GATT applications and
/// advertisements, and what remote centrals subscribed to. A restarted bluetoothd forgets
/// all of it; the notification listeners belong to the simulator and outlive restarts.
struct ServerState: Sendable {
    /// The daemon generation the registrations belong to (see ``adopt(generation:)``).
    var generation = 0
    /// Registered applications.
    var applications: [RegistrationKey: ApplicationRecord] = [:]
    /// Applications whose `GetManagedObjects` is still in flight.
    var pendingApplications: Set<RegistrationKey> = []
    /// Registered advertisements.
    var advertisements: [RegistrationKey: AdvertisementRecord] = [:]
    /// Advertisements whose `GetAll` is still in flight (they count against the maximum).
    var pendingAdvertisements: Set<RegistrationKey> = []
    /// Registration order, so snapshots and UUID look-ups are stable.
    var nextOrder = 0
    /// Streams of ``Simulator/notifications(for:)``.
    var listeners: [UInt64: NotificationListener] = [:]
    var nextListener: UInt64 = 0

    /// bluetoothd's advertising instances (`SupportedInstances` before any registration).
    static let maxAdvertisements = 5

    /// Drops registrations of an earlier daemon lifetime: the state is reset lazily, by the
    /// first server operation of a restarted daemon, because the daemon's start-up holds the
    /// state lock while it exports the adapters.
    mutating func adopt(generation: Int) {
        guard generation != self.generation else { return }
        for record in applications.values { record.tearDown() }
        for record in advertisements.values { record.watcher?.cancel() }
        let kept = (listeners, nextListener)
        self = ServerState()
        self.generation = generation
        (listeners, nextListener) = kept
    }

    /// Takes the next registration number.
    mutating func takeOrder() -> Int {
        defer { nextOrder += 1 }
        return nextOrder
    }

    /// Advertisements registered or pending on one adapter.
    func advertisementCount(adapter: Int, includingPending: Bool) -> Int {
        let registered = advertisements.keys.filter { $0.adapter == adapter }.count
        guard includingPending else { return registered }
        return registered + pendingAdvertisements.filter { $0.adapter == adapter }.count
    }

    /// The registered applications in registration order.
    var orderedApplications: [(key: RegistrationKey, record: ApplicationRecord)] {
        applications.sorted { $0.value.order < $1.value.order }.map { ($0.key, $0.value) }
    }
}

/// One registration: bluetoothd keys apps and adverts by adapter, sender and object path.
struct RegistrationKey: Sendable, Hashable {
    var adapter: Int
    var owner: BusName
    var path: ObjectPath
}

/// A registered GATT application and the remote-central state attached to it.
struct ApplicationRecord: Sendable {
    var application: RegisteredApplication
    var order: Int
    /// Watches the application's signals (Value changes, InterfacesRemoved).
    var watcher: Task<Void, Never>?
    /// Remote centrals subscribed per characteristic path, with what they asked for.
    var subscriptions: [ObjectPath: [String: ServerNotification.Kind]] = [:]
    /// `AcquireNotify` sockets per characteristic path (our end).
    var notifySockets: [ObjectPath: FileDescriptor] = [:]
    /// `AcquireWrite` sockets per characteristic path (our end).
    var writeSockets: [ObjectPath: FileDescriptor] = [:]

    /// Stops watching and hangs up every socket. A notify socket is only shut down: its read
    /// source sees the end of file and closes it.
    func tearDown() {
        watcher?.cancel()
        for socket in notifySockets.values { _ = Glibc.shutdown(socket.rawValue, Int32(SHUT_RDWR)) }
        for socket in writeSockets.values { socket.close() }
    }

    /// The characteristic at `path`, if the application registered one there.
    func characteristic(at path: ObjectPath) -> RegisteredCharacteristic? {
        for service in application.services {
            if let found = service.characteristics.first(where: { $0.path == path }) { return found }
        }
        return nil
    }

    /// The snapshot with the current subscribers filled in.
    var snapshot: RegisteredApplication {
        var copy = application
        for s in copy.services.indices {
            for c in copy.services[s].characteristics.indices {
                let path = copy.services[s].characteristics[c].path
                copy.services[s].characteristics[c].subscribedCentrals = (subscriptions[path] ?? [:]).keys.sorted()
            }
        }
        return copy
    }
}

/// A registered advertisement.
struct AdvertisementRecord: Sendable {
    var advertisement: RegisteredAdvertisement
    var order: Int
    /// Watches the object's `PropertiesChanged` (live updates).
    var watcher: Task<Void, Never>?
    /// Bumped whenever the `Timeout` timer is re-armed, so a stale timer does nothing.
    var timerStamp = 0
}

/// A consumer of ``Simulator/notifications(for:)``.
struct NotificationListener: Sendable {
    /// The characteristic UUID, 128-bit lower case.
    var characteristic: String
    var continuation: AsyncStream<ServerNotification>.Continuation
}
