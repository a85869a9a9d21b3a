import BlueZ
import DBus
import Testing

@Suite struct VocabularyTests {
    @Test func serviceNamesAndPaths() {
        #expect(BlueZService.busName.rawValue == "org.bluez")
        #expect(BlueZService.rootPath.rawValue == "/")
        #expect(BlueZService.managerPath.rawValue == "/org/bluez")
    }

    @Test(arguments: [
        (BlueZInterface.adapter1, "org.bluez.Adapter1"),
        (BlueZInterface.device1, "org.bluez.Device1"),
        (BlueZInterface.gattService1, "org.bluez.GattService1"),
        (BlueZInterface.gattCharacteristic1, "org.bluez.GattCharacteristic1"),
        (BlueZInterface.gattDescriptor1, "org.bluez.GattDescriptor1"),
        (BlueZInterface.gattManager1, "org.bluez.GattManager1"),
        (BlueZInterface.gattProfile1, "org.bluez.GattProfile1"),
        (BlueZInterface.leAdvertisingManager1, "org.bluez.LEAdvertisingManager1"),
        (BlueZInterface.leAdvertisement1, "org.bluez.LEAdvertisement1"),
        (BlueZInterface.agentManager1, "org.bluez.AgentManager1"),
        (BlueZInterface.agent1, "org.bluez.Agent1"),
        (BlueZInterface.battery1, "org.bluez.Battery1"),
    ])
    func interfaceNames(_ name: InterfaceName, _ text: String) {
        #expect(name.rawValue == text)
    }

    @Test(arguments: [
        (BlueZMethod.getManagedObjects, "GetManagedObjects"), (BlueZMethod.get, "Get"),
        (BlueZMethod.getAll, "GetAll"), (BlueZMethod.set, "Set"),
        (BlueZMethod.startDiscovery, "StartDiscovery"), (BlueZMethod.stopDiscovery, "StopDiscovery"),
        (BlueZMethod.setDiscoveryFilter, "SetDiscoveryFilter"),
        (BlueZMethod.getDiscoveryFilters, "GetDiscoveryFilters"), (BlueZMethod.removeDevice, "RemoveDevice"),
        (BlueZMethod.connectDevice, "ConnectDevice"), (BlueZMethod.connect, "Connect"),
        (BlueZMethod.disconnect, "Disconnect"), (BlueZMethod.connectProfile, "ConnectProfile"),
        (BlueZMethod.disconnectProfile, "DisconnectProfile"), (BlueZMethod.pair, "Pair"),
        (BlueZMethod.cancelPairing, "CancelPairing"), (BlueZMethod.getServiceRecords, "GetServiceRecords"),
        (BlueZMethod.readValue, "ReadValue"), (BlueZMethod.writeValue, "WriteValue"),
        (BlueZMethod.acquireWrite, "AcquireWrite"), (BlueZMethod.acquireNotify, "AcquireNotify"),
        (BlueZMethod.startNotify, "StartNotify"), (BlueZMethod.stopNotify, "StopNotify"),
        (BlueZMethod.confirm, "Confirm"), (BlueZMethod.registerApplication, "RegisterApplication"),
        (BlueZMethod.unregisterApplication, "UnregisterApplication"),
        (BlueZMethod.registerAdvertisement, "RegisterAdvertisement"),
        (BlueZMethod.unregisterAdvertisement, "UnregisterAdvertisement"),
        (BlueZMethod.registerAgent, "RegisterAgent"), (BlueZMethod.unregisterAgent, "UnregisterAgent"),
        (BlueZMethod.requestDefaultAgent, "RequestDefaultAgent"), (BlueZMethod.release, "Release"),
        (BlueZMethod.requestPinCode, "RequestPinCode"), (BlueZMethod.displayPinCode, "DisplayPinCode"),
        (BlueZMethod.requestPasskey, "RequestPasskey"), (BlueZMethod.displayPasskey, "DisplayPasskey"),
        (BlueZMethod.requestConfirmation, "RequestConfirmation"),
        (BlueZMethod.requestAuthorization, "RequestAuthorization"),
        (BlueZMethod.authorizeService, "AuthorizeService"), (BlueZMethod.cancel, "Cancel"),
        (BlueZSignal.interfacesAdded, "InterfacesAdded"), (BlueZSignal.interfacesRemoved, "InterfacesRemoved"),
        (BlueZSignal.propertiesChanged, "PropertiesChanged"), (BlueZSignal.disconnected, "Disconnected"),
    ])
    func memberNames(_ name: MemberName, _ text: String) {
        #expect(name.rawValue == text)
    }

    @Test func errorNamesAreTheCatalogue() throws {
        let expected = [
            "org.bluez.Error.InvalidArguments", "org.bluez.Error.InProgress", "org.bluez.Error.AlreadyExists",
            "org.bluez.Error.NotSupported", "org.bluez.Error.NotConnected", "org.bluez.Error.AlreadyConnected",
            "org.bluez.Error.NotAvailable", "org.bluez.Error.DoesNotExist", "org.bluez.Error.NotAuthorized",
            "org.bluez.Error.NotPermitted", "org.bluez.Error.NoSuchAdapter", "org.bluez.Error.AgentNotAvailable",
            "org.bluez.Error.NotReady", "org.bluez.Error.Failed", "org.bluez.Error.BREDR.ProfileUnavailable",
            "org.bluez.Error.ConnectionAttemptFailed", "org.bluez.Error.AuthenticationTimeout",
            "org.bluez.Error.AuthenticationRejected", "org.bluez.Error.AuthenticationCanceled",
            "org.bluez.Error.AuthenticationFailed", "org.bluez.Error.Busy", "org.bluez.Error.Blocked",
            "org.bluez.Error.Unsupported", "org.bluez.Error.Rejected", "org.bluez.Error.Canceled",
            "org.bluez.Error.InvalidOffset", "org.bluez.Error.InvalidValueLength",
            "org.bluez.Error.ImproperlyConfigured", "org.bluez.Failed",
        ]
        #expect(BlueZErrorName.all == expected)
        #expect(BlueZErrorName.failed == "org.bluez.Error.Failed")
        #expect(BlueZErrorName.failedWithoutErrorSegment == "org.bluez.Failed")
        #expect(BlueZErrorName.bredrProfileUnavailable == "org.bluez.Error.BREDR.ProfileUnavailable")
        for name in BlueZErrorName.all {
            // Every name must be sendable as an error name.
            _ = try ErrorName(name)
            #expect(BlueZErrorName.isBlueZError(name))
        }
        #expect(!BlueZErrorName.isBlueZError("org.freedesktop.DBus.Error.UnknownObject"))
    }

    @Test func standardMessages() {
        #expect(BlueZErrorMessage.leConnectionAbortByLocal == "le-connection-abort-by-local")
        #expect(BlueZErrorMessage.bredrConnectionCanceled == "br-connection-canceled")
        #expect(BlueZErrorMessage.notConnected == "Not connected")
        #expect(BlueZErrorMessage.notConnectedDefault == "Not Connected")
        #expect(BlueZErrorMessage.readNotPermitted == "Read not permitted")
        #expect(BlueZErrorMessage.writeNotPermitted == "Write not permitted")
        #expect(BlueZErrorMessage.notPaired == "Not paired")
        #expect(BlueZErrorMessage.invalidOffset == "Invalid offset")
        #expect(BlueZErrorMessage.invalidLength == "Invalid Length")
        #expect(BlueZErrorMessage.inProgress == "In Progress")
        #expect(BlueZErrorMessage.operationAlreadyInProgress == "Operation already in progress")
        #expect(BlueZErrorMessage.notSupported == "Operation is not supported")
        #expect(BlueZErrorMessage.notAuthorized == "Operation Not Authorized")
        #expect(BlueZErrorMessage.notReady == "Resource Not Ready")
        #expect(BlueZErrorMessage.doesNotExist == "Does Not Exist")
        #expect(BlueZErrorMessage.failedToParseAdvertisement == "Failed to parse advertisement.")
        #expect(BlueZErrorMessage.leConnectionKeyMissing == "le-connection-key-missing")
        #expect(BlueZErrorMessage.bredrConnectionProfileUnavailable == "br-connection-profile-unavailable")
        #expect(BlueZErrorMessage.noMoreProfiles == "No more profiles to connect to")
    }

    @Test(arguments: [
        (UInt8(0x0e), "Operation failed with ATT error: 0x0e"),
        (0x00, "Operation failed with ATT error: 0x00"),
        (0x80, "Operation failed with ATT error: 0x80"),
        (0xfd, "Operation failed with ATT error: 0xfd"),
    ])
    func attErrorMessages(_ code: UInt8, _ text: String) {
        #expect(BlueZErrorMessage.attError(code) == text)
        #expect(BlueZErrorMessage.attErrorCode(in: text) == code)
    }

    @Test(arguments: [
        "Not connected", "Operation failed with ATT error: 0x1", "Operation failed with ATT error: 0xzz", "",
    ])
    func nonATTMessagesHaveNoCode(_ text: String) {
        #expect(BlueZErrorMessage.attErrorCode(in: text) == nil)
    }

    @Test func stringValues() {
        #expect(AddressType.public.rawValue == "public")
        #expect(AddressType.random.rawValue == "random")
        #expect(PowerState.offBlocked.rawValue == "off-blocked")
        #expect(PowerState.onDisabling.rawValue == "on-disabling")
        #expect(AdvertisementType.peripheral.rawValue == "peripheral")
        #expect(AgentCapability.default.rawValue == "")
        #expect(AgentCapability.noInputNoOutput.rawValue == "NoInputNoOutput")
        #expect(DiscoveryTransport.le.rawValue == "le")
        // Unknown values are kept.
        #expect(PowerState(rawValue: "on-fire").rawValue == "on-fire")
    }

    @Test func stringValuesAreStrictAboutType() throws {
        #expect(try AddressType(dbusValue: .variant(.string("random"))) == .random)
        #expect(AddressType.random.dbusValue == .string("random"))
        let error = #expect(throws: DBusError.self) { try PowerState(dbusValue: .uint32(1)) }
        #expect(error?.code == .typeMismatch)
    }
}
