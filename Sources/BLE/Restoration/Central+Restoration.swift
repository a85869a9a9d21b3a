import BlueZ
import DBus
import Foundation

extension Central {
    /// The identifier's store, locked, and what the previous process kept; nil without an
    /// identifier. A state file that cannot be read is set aside with a warning.
    static func openRestoration(
        _ options: CentralOptions
    ) throws(BLEError) -> (store: RestorationStore, record: RestorationRecord?)? {
        guard let identifier = options.restoreIdentifier else { return nil }
        let store = try RestorationStore(identifier: identifier, directory: options.restorationDirectory)
        let (record, setAside) = store.load()
        if let setAside {
            options.logger.log(
                .warning, "the restoration state file was damaged or not ours; it was set aside",
                metadata: ["identifier": identifier, "moved to": setAside])
        }
        return (store, record)
    }

    /// Takes over what the previous process kept: its peripherals (links bluetoothd still
    /// holds taken up, the others reconnecting with their policy) and their subscriptions.
    func restore(_ record: RestorationRecord) async -> RestoredState {
        var restored: [Peripheral] = []
        var subscriptions: [Characteristic] = []
        for entry in record.peripherals {
            guard isOnThisAdapter(entry.id),
                let path = mirroredDevicePath(entry.id, entry.id.bluetoothAddress)
                    ?? (try? BlueZPath.device(entry.id.bluetoothAddress, adapter: adapterPath))
            else {
                session.logger.log(
                    .warning, "a kept peripheral is not restored: it is not on this central's adapter",
                    metadata: ["peripheral": entry.id.description, "adapter": adapterName])
                restoration?.disconnected(entry.id)
                continue
            }
            // Named as this adapter is now (a USB adapter may come back as another hciN).
            let peripheral = peripheral(for: entry.id, path: path)
            restored.append(peripheral)
            subscriptions += await peripheral.restore(
                policy: entry.policy.reconnectPolicy, subscriptions: entry.subscriptions)
        }
        return RestoredState(
            peripherals: restored, subscriptions: subscriptions,
            scanServices: record.scanServices.map { $0.compactMap { BluetoothUUID(validating: $0) } },
            passiveScanServices: record.passiveScanServices.map { $0.compactMap { BluetoothUUID(validating: $0) } })
    }
}
