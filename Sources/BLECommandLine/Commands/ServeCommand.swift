import BLE
import BLESimulator
import Foundation

/// `ble serve <spec.json>`: runs a peripheral (GATT server and advertisement) from a JSON spec.
enum ServeCommand {
    static let spec = CommandSpec(
        name: "serve", summary: "run a peripheral (GATT server + advertisement) from a JSON spec",
        arguments: [.init("spec.json", "the peripheral: name, advertisement, services (see Examples/serve/README.md)")],
        options: CommonOptions.placement + [.init("--check", "only check the spec and print what it serves")],
        details: """
            It publishes the services, advertises, answers reads from the current values (writes
            change them unless the spec says "onWrite": "reject"), notifies subscribed centrals on the
            spec's schedule, and logs each request and subscription with its time. Ctrl-C stops
            advertising and unpublishes (exit 0).

            examples:
              ble serve --check Examples/serve/heart-rate.json
              ble serve Examples/serve/heart-rate.json
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let spec = try load(arguments.positional(0) ?? "")
        if arguments.flag("--check") {
            print(spec)
            return ExitCode.success
        }
        return try await PeripheralServer.run(spec, options: common)
    }

    /// Reads and checks the spec file; a bad spec is a usage error naming the key.
    static func load(_ path: String) throws -> PeripheralSpec {
        let data: Data
        do {
            data = try FileContents.read(path)
        } catch {
            throw UsageError(error.description)
        }
        do {
            return try PeripheralSpec(json: data)
        } catch {
            throw UsageError("\(path): \(error)")
        }
    }

    /// The spec as a tree, as `ble explore` would show the served peripheral.
    static func print(_ spec: PeripheralSpec) {
        let advertised = spec.advertisement.services.map(Describe.uuid).joined(separator: ", ")
        Terminal.line(
            "\(Terminal.bold(spec.name ?? "(no name)"))  advertising: \(advertised.isEmpty ? "no services" : advertised)"
        )
        for (company, data) in spec.advertisement.manufacturerData.sorted(by: { $0.key < $1.key }) {
            Terminal.line("   manufacturer data \(Describe.manufacturer(company, data))")
        }
        for (serviceIndex, service) in spec.services.enumerated() {
            let lastService = serviceIndex == spec.services.count - 1
            let kind = service.primary ? "" : Terminal.dim("  secondary")
            Terminal.line("\(lastService ? "└─" : "├─") \(Terminal.cyan(Describe.uuid(service.uuid)))\(kind)")
            let indent = lastService ? "   " : "│  "
            for (index, characteristic) in service.characteristics.enumerated() {
                let last = index == service.characteristics.count - 1
                let properties = characteristic.properties.map(\.rawValue).joined(separator: ",")
                var line = "\(indent)\(last ? "└─" : "├─") \(Describe.uuid(characteristic.uuid)) "
                line += Terminal.dim("[\(properties)]") + "  = " + Describe.value(characteristic.value)
                if let notify = characteristic.notify {
                    line += Terminal.dim("  every \(notify.intervalMs) ms, \(max(1, notify.values.count)) value(s)")
                }
                Terminal.line(line)
                let inner = indent + (last ? "   " : "│  ")
                for (descriptorIndex, descriptor) in characteristic.descriptors.enumerated() {
                    let branch = descriptorIndex == characteristic.descriptors.count - 1 ? "└─" : "├─"
                    Terminal.line(
                        "\(inner)\(branch) \(Terminal.dim("descriptor")) \(Describe.uuid(descriptor.uuid))  = "
                            + Describe.value(descriptor.value))
                }
            }
        }
    }
}
