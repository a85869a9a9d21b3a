import BLE
import BlueZ
import DBus
import Foundation

/// `ble monitor`: what bluetoothd announces on the bus (adapters, devices and their GATT
/// objects added, changed and removed; bluetoothd leaving and coming back), as bluetoothctl
/// shows it, until Ctrl-C or `--count`.
enum MonitorCommand {
    static let spec = CommandSpec(
        name: "monitor", summary: "print what bluetoothd announces: objects added, changed, removed",
        options: CommonOptions.placement + [
            .init("--json", "one JSON object per announcement, one per line"),
            .init("--count", value: "N", "stop after N lines (default: at Ctrl-C)"),
        ],
        details: """
            Listens to bluetoothd's signals as any client on the bus receives them, and changes
            nothing: [NEW] for interfaces added, [CHG] for each property that changed, [DEL]
            for interfaces removed. A scan, a connection or another tool makes them happen.
            --adapter is accepted for symmetry and ignored: every adapter's objects are shown.

            examples:
              ble monitor
              ble monitor --json --count 20
            """)

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let json = arguments.flag("--json")
        let count = try arguments.integer("--count", in: 1...Int(Int32.max))
        let connection: Connection
        do {
            connection = try await Connection(bus: common.bus.connectionBus)
        } catch {
            throw BLEError(.bluetoothUnavailable, message: "cannot reach the bus: \(error.message)")
        }
        defer { connection.close() }
        let announcements: SignalSubscription
        do {
            guard try await connection.nameOwner(of: BlueZService.busName) != nil else {
                throw BLEError(.bluetoothUnavailable, message: "bluetoothd is not running on \(Self.place(common.bus))")
            }
            announcements = try await connection.signals(matchingAny: try Self.rules())
        } catch let error as DBusError {
            throw BLEError(.bluetoothUnavailable, message: "bluetoothd's signals: \(error.message)")
        }
        // On standard error, so that it never mixes with the announcements: from here on
        // nothing bluetoothd announces is missed.
        Terminal.note("monitoring bluetoothd on \(Self.place(common.bus)) (Ctrl-C to stop)")
        var printed = 0
        for await message in announcements {
            guard let announcement = Self.announcement(message) else { continue }
            let lines = json ? [announcement.record(at: Date()).line] : announcement.lines
            for line in lines.prefix(count.map { $0 - printed } ?? lines.count) {
                Terminal.line(line)
                printed += 1
            }
            if let count, printed >= count { break }
        }
        announcements.cancel()
        return ExitCode.success
    }

    /// bluetoothd's object-manager and property signals, and its name's changes of owner.
    static func rules() throws(DBusError) -> [MatchRule] {
        [
            MatchRule(sender: BlueZService.busName, interface: .objectManager),
            MatchRule(sender: BlueZService.busName, interface: .properties, member: BlueZSignal.propertiesChanged),
            MatchRule(
                sender: .bus, interface: .bus, member: try MemberName("NameOwnerChanged"),
                arguments: [0: BlueZService.busName.rawValue]),
        ]
    }

    private static func announcement(_ message: DBusMessage) -> Announcement? {
        if message.member?.rawValue == "NameOwnerChanged" {
            guard message.body.count == 3, case .string(let owner) = message.body[2] else { return nil }
            return owner.isEmpty ? Announcement(.reset) : .bluetoothdBack
        }
        guard let event = try? ObjectTreeEvent(signal: message) else { return nil }
        return Announcement(event)
    }

    private static func place(_ bus: Bus) -> String { bus == .system ? "the system bus" : "bus \(bus)" }
}
