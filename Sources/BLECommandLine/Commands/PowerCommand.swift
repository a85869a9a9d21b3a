import BLE

/// `ble power [on|off]`: shows whether the adapter is powered, or switches it.
enum PowerCommand {
    static let spec = CommandSpec(
        name: "power", summary: "show the adapter's power, or switch it on or off",
        arguments: [.init("on|off", "what to switch to (default: only show it)", optional: true)],
        options: CommonOptions.placement + [.init("--json", "the adapter and its power as one JSON object")],
        details: """
            Prints the adapter and its power, "hci0: on" ({"adapter":"hci0","powered":true} with
            --json), after switching it when asked; the switch returns once bluetoothd says it
            is done.

            examples:
              ble power
              ble power off --adapter hci1
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let wanted: Bool?
        switch arguments.positional(0) {
        case nil: wanted = nil
        case "on": wanted = true
        case "off": wanted = false
        case let other?: throw UsageError("power takes on or off, not \"\(other)\"")
        }
        let session = try await CentralSession.open(common, poweredOffIsFine: true)
        do {
            if let wanted { try await session.central.setPowered(wanted) }
            let on = await session.central.state == .poweredOn
            let adapter = session.central.adapterName
            Terminal.line(
                arguments.flag("--json")
                    ? PowerRecord(adapter: adapter, powered: on).line : "\(adapter): \(on ? "on" : "off")")
        } catch {
            await session.close()
            throw session.busLoss ?? error
        }
        await session.close()
        return ExitCode.success
    }
}

/// `ble power --json`: the adapter and whether it is powered.
struct PowerRecord: JSONLineRecord {
    var adapter: String
    var powered: Bool
}
