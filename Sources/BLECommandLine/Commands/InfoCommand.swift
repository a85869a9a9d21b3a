import BLE

/// `ble info <device>`: what bluetoothd knows of one device, without connecting.
enum InfoCommand {
    static let spec = CommandSpec(
        name: "info", summary: "show what bluetoothd knows of a device (no connection made)",
        arguments: [DeviceArgument.argument],
        options: CommonOptions.all + [.init("--json", "the device as one JSON object, as ble devices --json")],
        details: """
            The name, whether it is connected, paired and trusted, the last RSSI of the current
            discovery and the services it advertised (or BlueZ resolved). A name is looked up
            by scanning for up to the timeout; an address must be known to bluetoothd already.

            examples:
              ble info C4:7C:8D:6A:11:22
              ble info "Polar H10" --json
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let json = arguments.flag("--json")
        let session = try await CentralSession.open(common, poweredOffIsFine: true)
        let device: PeripheralInfo
        do {
            let id = try await session.resolve(arguments.positional(0) ?? "")
            guard let known = await session.central.knownPeripherals().first(where: { $0.id == id }) else {
                throw BLEError(
                    .notFound, message: "bluetoothd does not know \(id.address) (ble scan finds devices nearby)")
            }
            device = known
        } catch {
            await session.close()
            throw session.busLoss ?? error
        }
        await session.close()
        if json {
            Terminal.line(DeviceRecord(device).line)
        } else {
            for line in Self.lines(device) { Terminal.line(line) }
        }
        return ExitCode.success
    }

    /// The device, then one fact per line.
    static func lines(_ device: PeripheralInfo) -> [String] {
        var lines = ["\(device.id.address)  \(device.name ?? "(no name)")"]
        func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }
        lines.append(
            "  connected: \(yesNo(device.isConnected)), paired: \(yesNo(device.isPaired)), "
                + "trusted: \(yesNo(device.isTrusted))")
        if let rssi = device.rssi { lines.append("  RSSI: \(rssi) dBm") }
        if !device.services.isEmpty {
            lines.append("  services: " + device.services.map(Describe.uuid).joined(separator: ", "))
        }
        return lines
    }
}
