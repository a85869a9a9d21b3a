import BLE
import Foundation

/// `ble scan`: the advertising devices nearby, as a live table on a terminal, as lines in a
/// pipe, or as JSON lines.
enum ScanCommand {
    static let spec = CommandSpec(
        name: "scan", summary: "list advertising devices (a live table on a terminal)",
        options: CommonOptions.placement + [
            .init("--service", value: "UUID", "only devices advertising this service (repeatable)", repeatable: true),
            .init("--name", value: "PREFIX", "only devices whose name starts with PREFIX"),
            .init("--rssi", value: "DBM", "only devices received at least this strongly, e.g. -70"),
            .init("--duration", value: "SECONDS", "stop after this long (default: at Ctrl-C)"),
            .init("--count", value: "N", "stop after N reports (a script's \"wait until it shows up\")"),
            .init(
                "--passive",
                "listen without scan requests, through an advertisement monitor (needs --service and bluetoothd -E)"),
            .init("--json", "one JSON object per report, one per line"),
            .init("--plain", "plain lines even on a terminal"),
        ],
        details: """
            On a terminal the table updates in place (name, address, RSSI, services with their SIG names,
            manufacturer data). Otherwise each new or changed device is one line. Ctrl-C stops (exit 0).

            examples:
              ble scan
              ble scan --service 180D --rssi -70 --duration 10
              ble scan --json --duration 5 | jq .name
              ble scan --name Thermo --count 1 --duration 30
              ble scan --passive --service 180D
            """)

    /// How the discoveries are shown.
    enum Style {
        case table, lines, json
    }

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let services = try arguments.values("--service").map { text throws(UsageError) in
            guard let uuid = BluetoothUUID(validating: text) else { throw UsageError("\"\(text)\" is not a UUID") }
            return uuid
        }
        let rssi = try arguments.integer("--rssi", in: -127...20)
        let duration = try arguments.seconds("--duration")
        let count = try arguments.integer("--count", in: 1...1_000_000)
        let style: Style =
            arguments.flag("--json") ? .json : Terminal.outputIsTerminal && !arguments.flag("--plain") ? .table : .lines
        let options = ScanOptions(
            allowDuplicates: style == .table, rssiThreshold: rssi.map { Int16($0) },
            namePrefix: arguments.value("--name"), passive: arguments.flag("--passive"))

        let session = try await CentralSession.open(common)
        let scan = session.central.scan(services: services, options: options)
        let adapter = session.central.adapterName
        let failure = await withTaskGroup(of: BLEError?.self) { group in
            group.addTask { await show(scan, style: style, adapter: adapter, count: count) }
            if let duration {
                group.addTask {
                    try? await Task.sleep(for: duration)
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            await group.waitForAll()
            return first
        }
        await session.close()
        if let failure { throw failure }
        return ExitCode.success
    }

    /// Shows the scan until it fails, the task is cancelled or `count` reports were shown.
    private static func show(_ scan: ScanSequence, style: Style, adapter: String, count: Int?) async -> BLEError? {
        var table = style == .table ? LiveScanTable(adapter: adapter) : nil
        defer { table?.finish() }
        var shown = 0
        do {
            for try await discovery in scan {
                switch style {
                case .table: table?.add(ScanRow(discovery))
                case .lines: Terminal.line(ScanRow(discovery).plainLine)
                case .json: Terminal.line(ScanRecord(discovery).line)
                }
                shown += 1
                if let count, shown >= count { break }
            }
            return nil
        } catch {
            return error
        }
    }
}
