import BlueZ
import DBus

extension Daemon {
    /// GattManager1 and LEAdvertisingManager1 of an adapter (the peripheral role).
    ///
    /// Called while the daemon exports its tree under the state lock, so it builds the
    /// interfaces from constants only: a fresh daemon has no registrations.
    func serverInterfaces(adapter index: Int) throws(DBusError) -> [ExportedInterface] {
        [try gattManagerInterface(adapter: index), try advertisingManagerInterface(adapter: index)]
    }

    private func gattManagerInterface(adapter index: Int) throws(DBusError) -> ExportedInterface {
        ExportedInterface(
            BlueZInterface.gattManager1,
            methods: [
                .deferred(BlueZMethod.registerApplication, in: try Signature("oa{sv}")) { [weak self] call, reply in
                    self?.registerApplication(call, reply, adapter: index)
                },
                .deferred(BlueZMethod.unregisterApplication, in: try Signature("o")) { [weak self] call, reply in
                    self?.unregisterApplication(call, reply, adapter: index)
                },
            ])
    }

    private func advertisingManagerInterface(adapter index: Int) throws(DBusError) -> ExportedInterface {
        typealias Key = LEAdvertisingManagerProperties.Key
        let strings: ([String]) -> DBusValue = { .array(.string, $0.map { .string($0) }) }
        var properties = [
            ExportedProperty(Key.activeInstances, value: .byte(0)),
            ExportedProperty(Key.supportedInstances, value: .byte(UInt8(ServerState.maxAdvertisements))),
            ExportedProperty(Key.supportedIncludes, value: strings(AdvertisementParser.supportedIncludes)),
            ExportedProperty(Key.supportedSecondaryChannels, value: strings(AdvertisementParser.secondaryChannels)),
        ]
        if profile.advertisingFeatures {
            properties.append(ExportedProperty(Key.supportedFeatures, value: strings(["CanSetTxPower"])))
            let capabilities = LEAdvertisingManagerProperties(
                supportedInstances: 0,
                supportedCapabilities: AdvertisingCapabilities(
                    maxAdvertisingDataLength: 31, maxScanResponseLength: 31, minTxPower: -34, maxTxPower: 10))
            if let value = capabilities.dbusProperties[Key.supportedCapabilities] {
                properties.append(ExportedProperty(Key.supportedCapabilities, value: value))
            }
        }
        return ExportedInterface(
            BlueZInterface.leAdvertisingManager1,
            methods: [
                .deferred(BlueZMethod.registerAdvertisement, in: try Signature("oa{sv}")) { [weak self] call, reply in
                    self?.registerAdvertisement(call, reply, adapter: index)
                },
                .deferred(BlueZMethod.unregisterAdvertisement, in: try Signature("o")) { [weak self] call, reply in
                    self?.unregisterAdvertisement(call, reply, adapter: index)
                },
            ], properties: properties)
    }
}

extension BlueZProfile {
    /// `LEAdvertisingManager1.SupportedFeatures` and `SupportedCapabilities` are visible
    /// (experimental in 5.66, regular by 5.80); they come with the same releases as `PowerState`.
    var advertisingFeatures: Bool { powerState }
}
