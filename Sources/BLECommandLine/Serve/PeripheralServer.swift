import BLE
import DBus
import Foundation

/// `ble serve`'s peripheral: publishes the spec's services, advertises, answers reads and
/// writes from a value store, notifies on the spec's schedule, and logs what centrals do, one
/// timestamped line each, until Ctrl-C.
struct PeripheralServer {
    let spec: PeripheralSpec
    let manager: PeripheralManager
    let values: ServedValues

    /// Runs until the task is cancelled; unpublishes and stops advertising on the way out.
    static func run(_ spec: PeripheralSpec, options: CommonOptions) async throws -> Int32 {
        let manager = try await PeripheralManager(bus: options.bus, adapter: options.adapter)
        let server = PeripheralServer(spec: spec, manager: manager, values: ServedValues(spec))
        do {
            try await server.publish(options)
        } catch {
            await manager.close()
            throw error
        }
        await server.serve()
        await manager.close()
        Terminal.note("stopped advertising; services unpublished")
        return ExitCode.success
    }

    private func publish(_ options: CommonOptions) async throws(BLEError) {
        let state = await manager.state
        if let failure = Readiness.failure(state, adapter: manager.adapterName, adapters: [], bus: options.bus) {
            throw failure
        }
        try await manager.waitUntilPoweredOn(timeout: .seconds(3))
        for service in spec.mutableServices {
            _ = try await Progress.run("publishing \(Describe.uuid(service.uuid))") { () throws(BLEError) in
                try await manager.add(service)
            }
        }
        try await Progress.run("starting to advertise") { () throws(BLEError) in
            try await manager.startAdvertising(spec.advertisementData)
        }
        let name = spec.name.map { "\"\($0)\"" } ?? "(no name)"
        let count = spec.services.count == 1 ? "1 service" : "\(spec.services.count) services"
        Terminal.note("serving \(name) on \(manager.adapterName): \(count), advertising; Ctrl-C to stop")
    }

    /// Answers, notifies and logs until cancelled.
    private func serve() async {
        let manager = self.manager
        let values = self.values
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await request in manager.requests { Self.answer(request, values) }
            }
            group.addTask {
                for await event in manager.events { Self.log(event) }
            }
            for service in spec.services {
                for characteristic in service.characteristics {
                    guard let schedule = characteristic.notify else { continue }
                    group.addTask {
                        await Self.notify(
                            manager, values, service: service.uuid, characteristic: characteristic.uuid,
                            schedule: schedule)
                    }
                }
            }
            await Interruption.wait()
            group.cancelAll()
        }
    }

    private static func answer(_ request: PeripheralRequest, _ values: ServedValues) {
        let target = [request.characteristic.description] + (request.descriptor.map { [$0.description] } ?? [])
        let what = target.joined(separator: "/")
        let who = request.central.map { " by \($0)" } ?? ""
        switch request.kind {
        case .read:
            let value = values.value(request.service, request.characteristic, request.descriptor)
            guard request.offset <= value.count else {
                _ = request.respond(with: .invalidOffset)
                return log("read \(what)\(who): invalid offset \(request.offset)")
            }
            _ = request.respond(with: value.dropFirst(request.offset))
            log("read \(what)\(who) → \(Describe.value(value))")
        case .write:
            guard
                values.store(
                    request.value, at: request.offset, request.service, request.characteristic, request.descriptor)
            else {
                _ = request.respond(with: .writeNotPermitted)
                return log("write \(what)\(who) refused: \(Describe.value(request.value))")
            }
            _ = request.respond()
            log("write \(what)\(who) ← \(Describe.value(request.value))")
        }
    }

    private static func log(_ event: PeripheralManagerEvent) {
        switch event {
        case .subscribed(let characteristic, let central):
            log("subscribed to \(characteristic)\(central.map { " by \($0)" } ?? "")")
        case .unsubscribed(let characteristic, let central):
            log("unsubscribed from \(characteristic)\(central.map { " by \($0)" } ?? "")")
        case .advertisingStopped:
            log("bluetoothd stopped the advertisement")
        case .republished:
            log("bluetoothd restarted; services and advertisement registered again")
        case .republishFailed(let error):
            log("bluetoothd restarted and registering again failed: \(error.message)")
        default:
            break
        }
    }

    /// Sends the schedule's values in turn while a central is subscribed.
    private static func notify(
        _ manager: PeripheralManager, _ values: ServedValues, service: BluetoothUUID, characteristic: BluetoothUUID,
        schedule: NotifySpec
    ) async {
        var index = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(schedule.intervalMs))
            guard await manager.isNotifying(characteristic, in: service) else { continue }
            let value =
                schedule.values.isEmpty
                ? values.value(service, characteristic, nil) : schedule.values[index % schedule.values.count]
            index += 1
            _ = values.store(value, at: 0, service, characteristic, nil, replacing: true)
            do {
                try await manager.updateValue(value, for: characteristic, in: service)
                log("notified \(characteristic) → \(Describe.value(value))")
            } catch {
                if error.code != .cancelled { log("notifying \(characteristic) failed: \(error.message)") }
            }
        }
    }

    private static func log(_ text: String) {
        Terminal.line("\(Terminal.dim(Describe.time(Date())))  \(text)")
    }
}

/// The values the served attributes have now: the spec's, changed by writes and notifications.
final class ServedValues: Sendable {
    private struct Entry {
        var value: Data
        var writable: Bool
    }

    private let entries: PosixMutex<[String: Entry]>

    init(_ spec: PeripheralSpec) {
        var entries: [String: Entry] = [:]
        for service in spec.services {
            for characteristic in service.characteristics {
                let key = Self.key(service.uuid, characteristic.uuid, nil)
                entries[key] = Entry(value: characteristic.value, writable: characteristic.onWrite == .store)
                for descriptor in characteristic.descriptors {
                    entries[Self.key(service.uuid, characteristic.uuid, descriptor.uuid)] = Entry(
                        value: descriptor.value, writable: descriptor.writable)
                }
            }
        }
        self.entries = PosixMutex(entries)
    }

    private static func key(_ service: BluetoothUUID, _ characteristic: BluetoothUUID, _ descriptor: BluetoothUUID?)
        -> String
    {
        [service, characteristic].map(\.uuidString).joined(separator: "/")
            + (descriptor.map { "/\($0.uuidString)" } ?? "")
    }

    /// The value now (empty for an attribute the spec does not have).
    func value(_ service: BluetoothUUID, _ characteristic: BluetoothUUID, _ descriptor: BluetoothUUID?) -> Data {
        entries.withLock { $0[Self.key(service, characteristic, descriptor)]?.value ?? Data() }
    }

    /// Writes `value` at `offset`; false when the attribute refuses writes or the offset is past the end.
    func store(
        _ value: Data, at offset: Int, _ service: BluetoothUUID, _ characteristic: BluetoothUUID,
        _ descriptor: BluetoothUUID?, replacing: Bool = false
    ) -> Bool {
        entries.withLock { entries in
            let key = Self.key(service, characteristic, descriptor)
            guard var entry = entries[key], entry.writable || replacing, offset <= entry.value.count else {
                return false
            }
            entry.value = entry.value.prefix(offset) + value
            entries[key] = entry
            return true
        }
    }
}
