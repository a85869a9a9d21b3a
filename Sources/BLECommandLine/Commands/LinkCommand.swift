import BLE

/// `ble connect <device>` and `ble disconnect <device>`: a link made or taken down for other
/// tools, as bluetoothctl's connect and disconnect (bluetoothd keeps a link this process made
/// after it exits).
enum LinkCommand {
    static let connectSpec = CommandSpec(
        name: "connect", summary: "connect to a device and leave the link up for other tools",
        arguments: [DeviceArgument.argument], options: CommonOptions.all,
        details: """
            Returns once the device's services are resolved; the link stays up after the tool
            exits (bluetoothd keeps it) until ble disconnect, the device or a power cycle ends it.

            examples:
              ble connect C4:7C:8D:6A:11:22
              ble connect "Polar H10" --timeout 30
            """)

    static let disconnectSpec = CommandSpec(
        name: "disconnect", summary: "take down the link to a device, whoever made it",
        arguments: [DeviceArgument.argument], options: CommonOptions.all,
        details: """
            Returns once bluetoothd says the link is down; a device that is not connected is
            left as it is (exit 0).

            examples:
              ble disconnect C4:7C:8D:6A:11:22
            """)

    static func connect(_ arguments: ParsedArguments) async throws -> Int32 {
        try await CentralSession.run(try CommonOptions(arguments)) { session in
            let id = try await session.resolve(arguments.positional(0) ?? "")
            _ = try await session.connect(id)
            Terminal.line("\(id.address): connected")
        }
        return ExitCode.success
    }

    static func disconnect(_ arguments: ParsedArguments) async throws -> Int32 {
        try await CentralSession.run(try CommonOptions(arguments)) { session in
            let id = try await session.resolve(arguments.positional(0) ?? "")
            if let peripheral = await session.central.connectedPeripherals().first(where: { $0.id == id }) {
                try await peripheral.disconnect()
            }
            Terminal.line("\(id.address): disconnected")
        }
        return ExitCode.success
    }
}
