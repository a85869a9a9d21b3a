import BLE
import Foundation

/// `ble notify <device> <characteristic>`: subscribes and prints each value with its time until
/// Ctrl-C or `--count`; on the way out it unsubscribes and disconnects.
enum NotifyCommand {
    static let spec = CommandSpec(
        name: "notify", summary: "stream a characteristic's notifications or indications, with timestamps",
        arguments: [DeviceArgument.argument, DeviceArgument.characteristic],
        options: CommonOptions.all + [
            ReadCommand.formatOption, ReadCommand.jsonOption,
            .init("--count", value: "N", "stop after N values (default: at Ctrl-C)"),
            .init(
                "--restore-id", value: "NAME",
                "keep the link and subscription under NAME, for a central that restores them after a crash"),
            .init("--state-dir", value: "DIR", "where --restore-id keeps its state (default ~/.local/state/swift-ble)"),
        ],
        details: """
            Each value is one line: the local time with milliseconds, then the value. Ctrl-C
            unsubscribes and disconnects (exit 0); a link that drops ends with exit 6.

            examples:
              ble notify C4:7C:8D:6A:11:22 2A37
              ble notify "Polar H10" heart-rate/heart-rate-measurement --count 10 --format uint8
            """)

    /// How the stream ended.
    enum End: Sendable {
        case finished(Int)
        case linkLost(DisconnectReason)
    }

    static func run(_ arguments: ParsedArguments) async throws -> Int32 {
        let common = try CommonOptions(arguments)
        let format = try arguments.value("--format").map { text throws(UsageError) in try ValueFormat(named: text) }
        let count = try arguments.integer("--count", in: 1...Int(Int32.max))
        let json = arguments.flag("--json")
        _ = try CharacteristicPath(arguments.positional(1) ?? "")
        var centralOptions = CentralOptions()
        centralOptions.restoreIdentifier = arguments.value("--restore-id")
        centralOptions.restorationDirectory = arguments.value("--state-dir").map { URL(fileURLWithPath: $0) }
        return try await DeviceArgument.withConnection(arguments, common, centralOptions: centralOptions) {
            peripheral, services in
            let characteristic = try DeviceArgument.characteristic(arguments, in: services)
            guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else {
                throw BLEError(
                    .notSupported,
                    message: "\(Describe.uuid(characteristic.uuid)) neither notifies nor indicates "
                        + "[\(characteristic.properties)]")
            }
            let events = peripheral.events
            let values = try await Progress.run("subscribing") { () throws(BLEError) in
                try await characteristic.subscribe()
            }
            Terminal.note("subscribed to \(Describe.uuid(characteristic.uuid)); Ctrl-C to stop")
            // A line per value: the time and the value, or the same as a JSON object.
            let line: @Sendable (Data) -> String = { [format] value in
                if json {
                    return ValueRecord(
                        value, of: characteristic, address: peripheral.id.address, format: format ?? .hex
                    )
                    .line
                }
                let format = format ?? .hex
                let text = (try? format.format(value)) ?? "\(ValueFormat.hex(value)) (not \(format.rawValue))"
                return "\(Terminal.dim(Describe.time(Date())))  \(text)"
            }
            let end = await stream(values, events: events, line: line, count: count)
            switch end {
            case .finished(let received):
                Terminal.note("\(Describe.count(received, "value")) received; unsubscribing and disconnecting")
                return ExitCode.success
            case .linkLost(let reason):
                throw BLEError(.disconnected, message: "the link dropped (\(reason))")
            }
        }
    }

    /// Prints values until `count`, cancellation or a lost link.
    private static func stream(
        _ values: NotificationSequence, events: AsyncStream<ConnectionEvent>,
        line: @escaping @Sendable (Data) -> String,
        count: Int?
    ) async -> End {
        await withTaskGroup(of: End?.self) { group in
            group.addTask {
                var received = 0
                for await value in values {
                    received += 1
                    Terminal.line(line(value))
                    if let count, received >= count { break }
                }
                return .finished(received)
            }
            group.addTask {
                for await event in events {
                    if case .disconnected(let reason) = event { return .linkLost(reason) }
                }
                return nil
            }
            // The first to end decides (count reached, or link lost); the other is then cancelled.
            var end: End?
            for await next in group {
                guard let next else { continue }
                end = end ?? next
                group.cancelAll()
            }
            return end ?? .finished(0)
        }
    }
}
