import BLE
import Foundation

/// `ble explore <device>`: connects and prints the GATT tree: services, characteristics with
/// their properties and (when readable) values, descriptors with their values.
enum ExploreCommand {
    static let spec = CommandSpec(
        name: "explore", summary: "connect and print the device's services, characteristics and values",
        arguments: [DeviceArgument.argument],
        options: CommonOptions.all + [
            .init("--no-values", "do not read values"),
            .init("--json", "the tree as one JSON object (values in hex, refusals as error)"),
        ],
        details: DeviceArgument.help)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let readValues = !arguments.flag("--no-values")
        let json = arguments.flag("--json")
        return try await DeviceArgument.withConnection(arguments, common) { peripheral, services in
            let name = await peripheral.name
            if json {
                Terminal.line(try await record(peripheral, name: name, services, readValues: readValues).line)
                return ExitCode.success
            }
            Terminal.line("\(Terminal.bold(name ?? "(no name)"))  \(peripheral.id.address)")
            for (serviceIndex, service) in services.enumerated() {
                let lastService = serviceIndex == services.count - 1
                let kind = service.isPrimary ? "" : Terminal.dim("  secondary")
                Terminal.line("\(lastService ? "└─" : "├─") \(Terminal.cyan(Describe.uuid(service.uuid)))\(kind)")
                let indent = lastService ? "   " : "│  "
                for (index, characteristic) in service.characteristics.enumerated() {
                    let last = index == service.characteristics.count - 1
                    try await printCharacteristic(
                        characteristic, prefix: indent, last: last, readValues: readValues)
                }
            }
            return ExitCode.success
        }
    }

    private static func printCharacteristic(
        _ characteristic: Characteristic, prefix: String, last: Bool, readValues: Bool
    ) async throws {
        let properties = Terminal.dim("[\(characteristic.properties)]")
        var line = "\(prefix)\(last ? "└─" : "├─") \(Describe.uuid(characteristic.uuid)) \(properties)"
        if readValues && characteristic.properties.contains(.read) {
            line += "  " + (try await readOutcome { () throws(BLEError) in try await characteristic.read() })
        }
        Terminal.line(line)
        let inner = prefix + (last ? "   " : "│  ")
        for (index, descriptor) in characteristic.descriptors.enumerated() {
            var text = "\(inner)\(index == characteristic.descriptors.count - 1 ? "└─" : "├─") "
            text += Terminal.dim("descriptor ") + Describe.uuid(descriptor.uuid)
            if readValues {
                text +=
                    "  " + (try await readOutcome { () throws(BLEError) in try await characteristic.read(descriptor) })
            }
            Terminal.line(text)
        }
    }

    /// `= 01 48` or `! not permitted: …`; a lost link or Ctrl-C stops the whole command.
    private static func readOutcome(_ read: () async throws(BLEError) -> Data) async throws(BLEError) -> String {
        switch try await ReadOutcome.of(read) {
        case .value(let data): return "= " + Describe.value(data)
        case .refused(let error): return Terminal.yellow("! \(error.code): \(error.message)")
        }
    }

    /// The tree for `--json`, with the same reads as the printed one.
    private static func record(
        _ peripheral: Peripheral, name: String?, _ services: [Service], readValues: Bool
    ) async throws -> ExploreRecord {
        var records: [ExploreRecord.ServiceRecord] = []
        for service in services {
            var characteristics: [ExploreRecord.CharacteristicRecord] = []
            for characteristic in service.characteristics {
                let value: ReadOutcome? =
                    readValues && characteristic.properties.contains(.read)
                    ? try await ReadOutcome.of { () throws(BLEError) in try await characteristic.read() } : nil
                var descriptors: [ExploreRecord.Attribute] = []
                for descriptor in characteristic.descriptors {
                    let outcome: ReadOutcome? =
                        readValues
                        ? try await ReadOutcome.of { () throws(BLEError) in try await characteristic.read(descriptor) }
                        : nil
                    descriptors.append(ExploreRecord.Attribute(descriptor.uuid, outcome: outcome))
                }
                characteristics.append(
                    ExploreRecord.CharacteristicRecord(
                        ExploreRecord.Attribute(characteristic.uuid, outcome: value),
                        properties: "\(characteristic.properties)".split(separator: ",").map(String.init),
                        descriptors: descriptors))
            }
            records.append(
                ExploreRecord.ServiceRecord(
                    uuid: service.uuid.description, name: service.uuid.name, primary: service.isPrimary,
                    characteristics: characteristics))
        }
        return ExploreRecord(address: peripheral.id.address, name: name, services: records)
    }
}
