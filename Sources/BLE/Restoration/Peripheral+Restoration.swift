import BlueZ
import DBus

extension Peripheral {
    /// Takes this peripheral over from the previous process: with the link still up, takes it
    /// up and subscribes again at once (the characteristics subscribed are returned); else
    /// reconnects now, then as `policy` says, and subscribes again when the link is back.
    func restore(policy: ReconnectPolicy, subscriptions: [RestorationRecord.Subscription]) async -> [Characteristic] {
        runLink(lifecycle.policyChanged(policy))
        let device = mirroredDevice()
        if device.connected, device.resolved {
            reattach()
            return await subscribeAgain(subscriptions)
        }
        restoredSubscriptions = subscriptions
        follow()
        runLink(lifecycle.restore())
        return []
    }

    /// After a link came up: the restored subscriptions still waiting for it.
    func subscribeAgainAfterRestoredLink() async {
        guard !restoredSubscriptions.isEmpty else { return }
        let wanted = restoredSubscriptions
        restoredSubscriptions = []
        _ = await subscribeAgain(wanted)
    }

    /// Subscribes to each of `wanted` and keeps its values for the first iteration of the
    /// characteristic's ``Characteristic/notifications``. One that is gone or refuses is left
    /// out of the record, and the reason logged.
    private func subscribeAgain(_ wanted: [RestorationRecord.Subscription]) async -> [Characteristic] {
        guard !wanted.isEmpty else { return [] }
        let services: [Service]
        do {
            services = try discoverServices()
        } catch {
            session.logger.log(
                .warning, "restored subscriptions wait for the next link: services not available",
                metadata: ["peripheral": id.description, "error": "\(error)"])
            restoredSubscriptions = wanted
            return []
        }
        var subscribed: [Characteristic] = []
        for subscription in wanted {
            guard let characteristic = Self.find(subscription, in: services) else {
                leaveOut(subscription, because: "the characteristic is gone (the peripheral's services changed)")
                continue
            }
            do {
                characteristic.keepRestoredIteration(try await characteristic.subscribe())
                subscribed.append(characteristic)
            } catch {
                leaveOut(subscription, because: "subscribing again failed: \(error)")
            }
        }
        return subscribed
    }

    private func leaveOut(_ subscription: RestorationRecord.Subscription, because reason: String) {
        session.logger.log(
            .warning, "a restored subscription is left out: \(reason)",
            metadata: [
                "peripheral": id.description, "service": subscription.service,
                "characteristic": subscription.characteristic,
            ])
        central?.restoration?.subscription(subscription, of: id, live: false)
    }

    /// The characteristic `subscription` names: same UUIDs, the same handle first.
    private static func find(_ subscription: RestorationRecord.Subscription, in services: [Service]) -> Characteristic?
    {
        let candidates = services.filter { $0.uuid.uuidString == subscription.service }.flatMap(\.characteristics)
            .filter { $0.uuid.uuidString == subscription.characteristic }
        return candidates.first { $0.handle == subscription.handle && subscription.handle != nil } ?? candidates.first
    }

    /// Tells the restoration record whether `path` has a live notification iteration.
    func recordSubscription(at path: ObjectPath, live: Bool) {
        guard let restoration = central?.restoration,
            let (service, characteristic) = gatt.layout.flatMap({ layout in
                layout.services.lazy.compactMap { service in
                    service.characteristics.first { $0.path == path }.map { (service, $0) }
                }.first
            })
        else { return }
        restoration.subscription(
            RestorationRecord.Subscription(
                service: service.uuid.uuidString, characteristic: characteristic.uuid.uuidString,
                handle: characteristic.handle),
            of: id, live: live)
    }
}
