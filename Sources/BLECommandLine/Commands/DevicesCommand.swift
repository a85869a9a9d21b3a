import BLE
import Foundation

/// `ble devices`: the devices bluetoothd knows on the adapter (seen in a scan, paired, or
/// connected), without scanning.
enum DevicesCommand {
    static let spec = CommandSpec(
        name: "devices", summary: "list the devices bluetoothd knows (paired, connected, seen)",
        options: CommonOptions.placement + [.init("--json", "one JSON object per device, one per line")],
        details: """
            One line per device, by address: the address, the name, then connected and paired
            when they are. It does not scan: run ble scan to find new devices.

            examples:
              ble devices
              ble devices --json | jq 'select(.paired)'
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let json = arguments.flag("--json")
        let session = try await CentralSession.open(common, poweredOffIsFine: true)
        let devices = await session.central.knownPeripherals().sorted { $0.id.address < $1.id.address }
        await session.close()
        for device in devices {
            Terminal.line(json ? DeviceRecord(device).line : Self.line(device))
        }
        return ExitCode.success
    }

    /// `C4:7C:8D:6A:11:22  Test HRM  connected, paired`.
    static func line(_ device: PeripheralInfo) -> String {
        var states: [String] = []
        if device.isConnected { states.append("connected") }
        if device.isPaired { states.append("paired") }
        return
            ([device.id.address, device.name ?? "(no name)"] + (states.isEmpty ? [] : [states.joined(separator: ", ")]))
            .joined(separator: "  ")
    }
}

/// One known device as a JSON object (`ble devices --json`).
struct DeviceRecord: JSONLineRecord {
    var adapter: String
    var address: String
    var name: String?
    var connected: Bool
    var paired: Bool
    var trusted: Bool
    var rssi: Int16?
    var services: [String]

    init(_ device: PeripheralInfo) {
        adapter = device.id.adapter
        address = device.id.address
        name = device.name
        connected = device.isConnected
        paired = device.isPaired
        trusted = device.isTrusted
        rssi = device.rssi
        services = device.services.map(\.description)
    }
}
