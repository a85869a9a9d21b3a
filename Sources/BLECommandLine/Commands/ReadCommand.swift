import BLE

/// `ble read <device> <characteristic>`: prints the value in the chosen format.
enum ReadCommand {
    static let formatOption = CommandSpec.Option(
        "--format", value: "FORMAT", "hex (default), utf8, uint8, uint16, uint32, int8, int16, int32, base64")

    static let jsonOption = CommandSpec.Option(
        "--json", "a JSON object per value: time, address, characteristic, value (hex), formatted")

    static let spec = CommandSpec(
        name: "read", summary: "read a characteristic's value",
        arguments: [DeviceArgument.argument, DeviceArgument.characteristic],
        options: CommonOptions.all + [formatOption, jsonOption],
        details: """
            Integers are little-endian, as Bluetooth sends them; a value of several is printed as
            several numbers.

            examples:
              ble read C4:7C:8D:6A:11:22 2A38
              ble read "Polar H10" battery-level --format uint8
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let format = try arguments.value("--format").map { text throws(UsageError) in try ValueFormat(named: text) }
        _ = try CharacteristicPath(arguments.positional(1) ?? "")
        let json = arguments.flag("--json")
        return try await DeviceArgument.withConnection(arguments, common) { peripheral, services in
            let characteristic = try DeviceArgument.characteristic(arguments, in: services)
            let value = try await characteristic.read()
            if json {
                Terminal.line(
                    ValueRecord(value, of: characteristic, address: peripheral.id.address, format: format ?? .hex).line)
                return ExitCode.success
            }
            do throws(UsageError) {
                Terminal.line(try (format ?? .hex).format(value))
            } catch {
                throw BLETool.Failure(description: error.message, status: ExitCode.failure)
            }
            return ExitCode.success
        }
    }
}
