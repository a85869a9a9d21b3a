import BLE

/// The `<device>` argument the GATT commands share, and the connect → work → disconnect frame
/// around them.
enum DeviceArgument {
    static let argument = CommandSpec.Argument(
        "device", "an address (C4:7C:8D:6A:11:22, or hci1/C4:7C:…) or an advertised name")
    static let characteristic = CommandSpec.Argument(
        "characteristic", "a UUID (2A37), a SIG name (battery-level), either after its service: 180D/2A37")

    static let help = """
        The device is connected for the command and disconnected afterwards; a name is looked for
        with a scan of up to --timeout seconds.
        """

    /// Opens the central, connects to the device named by the first argument, discovers its
    /// services, runs `body`, and disconnects and closes on every way out (Ctrl-C included).
    static func withConnection(
        _ arguments: ParsedArguments, _ common: CommonOptions, centralOptions: CentralOptions = CentralOptions(),
        _ body: (Peripheral, [Service]) async throws -> Int32
    ) async throws -> Int32 {
        let session = try await CentralSession.open(common, centralOptions: centralOptions)
        if let identifier = centralOptions.restoreIdentifier, let restored = await session.central.restoredState {
            Terminal.note(
                "restored under \(identifier): \(Describe.count(restored.peripherals.count, "peripheral")), "
                    + Describe.count(restored.subscriptions.count, "subscription"))
        }
        do {
            let id = try await session.resolve(arguments.positional(0) ?? "")
            let peripheral = try await session.connect(id)
            let status: Int32
            do {
                let services = try await Progress.run("discovering services") { () throws(BLEError) in
                    try await peripheral.discoverServices()
                }
                status = try await body(peripheral, services)
                // A stream that ended because the bus went is no success.
                if let loss = session.busLoss { throw loss }
            } catch {
                await session.disconnect(peripheral)
                throw session.busLoss ?? error
            }
            await session.disconnect(peripheral)
            await session.close()
            return status
        } catch {
            await session.close()
            throw session.busLoss ?? error
        }
    }

    /// The characteristic named by the second argument.
    static func characteristic(_ arguments: ParsedArguments, in services: [Service]) throws -> Characteristic {
        let text = arguments.positional(1) ?? ""
        return try CharacteristicPath(text).find(in: services, written: text)
    }
}
