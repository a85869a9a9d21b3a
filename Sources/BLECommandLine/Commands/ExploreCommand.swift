import BLE
import Foundation

/// `ble explore <device>`: connects and prints the GATT tree: services, characteristics with
/// their properties and (when readable) values, descriptors with their values.
enum ExploreCommand {
    static let spec = CommandSpec(
        name: "explore", summary: "connect and print the device's services, characteristics and values",
        arguments: [DeviceArgument.argument],
        options: CommonOptions.all + [.init("--no-values", "do not read values")],
        details: DeviceArgument.help)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let readValues = !arguments.flag("--no-values")
        return try await DeviceArgument.withConnection(arguments, common) { peripheral, services in
            let name = await peripheral.name
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
        do {
            return "= " + Describe.value(try await read())
        } catch  where [.disconnected, .notConnected, .cancelled, .bluetoothUnavailable].contains(error.code) {
            throw error
        } catch {
            return Terminal.yellow("! \(error.code): \(error.message)")
        }
    }
}
