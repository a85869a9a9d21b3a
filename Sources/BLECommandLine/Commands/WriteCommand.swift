import BLE

/// `ble write <device> <characteristic> <value>`: writes a value given in the chosen format.
enum WriteCommand {
    static let spec = CommandSpec(
        name: "write", summary: "write a characteristic's value",
        arguments: [
            DeviceArgument.argument, DeviceArgument.characteristic,
            .init("value", "the value, in --format (hex by default: 01, 0148, \"01 48\", 0x0148)"),
        ],
        options: CommonOptions.all + [
            ReadCommand.formatOption,
            .init(
                "--type", value: "TYPE",
                "request (acknowledged), command (without response) or reliable; default: request when the characteristic allows it"
            ),
        ],
        details: """
            examples:
              ble write C4:7C:8D:6A:11:22 2A39 01
              ble write C4:7C:8D:6A:11:22 6e400002-b5a3-f393-e0a9-e50e24dcca9e "hello" --format utf8 --type command
              ble write C4:7C:8D:6A:11:22 2A39 300 --format uint16
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let format = try arguments.value("--format").map { text throws(UsageError) in try ValueFormat(named: text) }
        let value = try (format ?? .hex).parse(arguments.positional(2) ?? "")
        let requestedType = try arguments.value("--type").map(writeType)
        _ = try CharacteristicPath(arguments.positional(1) ?? "")
        return try await DeviceArgument.withConnection(arguments, common) { peripheral, services in
            let characteristic = try DeviceArgument.characteristic(arguments, in: services)
            let type = requestedType ?? defaultType(characteristic.properties)
            try await characteristic.write(value, type: type)
            let bytes = value.count == 1 ? "1 byte" : "\(value.count) bytes"
            Terminal.line(
                "wrote \(ValueFormat.hex(value)) (\(bytes), \(name(of: type))) to \(Describe.uuid(characteristic.uuid))"
            )
            return ExitCode.success
        }
    }

    static func writeType(_ text: String) throws(UsageError) -> WriteType {
        switch text.lowercased() {
        case "request", "with-response": .withResponse
        case "command", "without-response": .withoutResponse
        case "reliable": .reliable
        default: throw UsageError("--type is request, command or reliable, not \"\(text)\"")
        }
    }

    /// A request when the characteristic takes one; a command when that is all it takes.
    static func defaultType(_ properties: CharacteristicProperties) -> WriteType {
        !properties.contains(.write) && properties.contains(.writeWithoutResponse) ? .withoutResponse : .withResponse
    }

    static func name(of type: WriteType) -> String {
        switch type {
        case .withResponse: "request"
        case .withoutResponse: "command"
        case .reliable: "reliable"
        }
    }
}
