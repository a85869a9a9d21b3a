import BLE
import Foundation

/// The `ble` command-line tool: parses the command line, runs the command, reports failures as
/// one line on standard error and returns a distinct exit status (see ``ExitCode``).
public enum BLETool {
    /// A command: what it accepts, and what it does with it.
    struct Command: Sendable {
        let spec: CommandSpec
        let run: @Sendable (ParsedArguments) async throws -> Int32
    }

    /// A failure that is neither a usage error nor a ``BLEError``, with its exit status.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        let status: Int32
    }

    static let commands: [Command] = [
        Command(spec: ScanCommand.spec, run: ScanCommand.run),
        Command(spec: DevicesCommand.spec, run: DevicesCommand.run),
        Command(spec: InfoCommand.spec, run: InfoCommand.run),
        Command(spec: PowerCommand.spec, run: PowerCommand.run),
        Command(spec: LinkCommand.connectSpec, run: LinkCommand.connect),
        Command(spec: LinkCommand.disconnectSpec, run: LinkCommand.disconnect),
        Command(spec: PairingCommands.pairSpec, run: PairingCommands.pair),
        Command(spec: PairingCommands.unpairSpec, run: PairingCommands.unpair),
        Command(spec: PairingCommands.trustSpec, run: PairingCommands.trust),
        Command(spec: MonitorCommand.spec, run: MonitorCommand.run),
        Command(spec: ExploreCommand.spec, run: ExploreCommand.run),
        Command(spec: ReadCommand.spec, run: ReadCommand.run),
        Command(spec: WriteCommand.spec, run: WriteCommand.run),
        Command(spec: NotifyCommand.spec, run: NotifyCommand.run),
        Command(spec: ServeCommand.spec, run: ServeCommand.run),
        Command(spec: SimCommand.spec, run: { try await SimCommand.run($0, tool: "ble sim") }),
        Command(spec: DemoCommand.spec, run: DemoCommand.run),
    ]

    /// Runs `ble <arguments>` and returns the exit status.
    public static func main(_ arguments: [String]) async -> Int32 {
        guard let name = arguments.first, !["-h", "--help", "help"].contains(name) else {
            Terminal.line(help)
            return ExitCode.success
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            Terminal.error(
                "unknown command \"\(name)\"; commands: \(commands.map(\.spec.name).joined(separator: ", "))")
            return ExitCode.usage
        }
        return await run(command.spec, Array(arguments.dropFirst()), command.run)
    }

    /// Parses `arguments` for `spec` and runs `body`, turning every failure into its line and
    /// status; `tool` starts each error line (`ble read` when nil).
    public static func run(
        _ spec: CommandSpec, _ arguments: [String], tool: String? = nil,
        _ body: @Sendable (ParsedArguments) async throws -> Int32
    ) async -> Int32 {
        let prefix = tool ?? "ble \(spec.name)"
        do {
            let parsed = try ParsedArguments(arguments, for: spec)
            if parsed.wantsHelp {
                Terminal.line(spec.help(tool: tool))
                return ExitCode.success
            }
            return try await body(parsed)
        } catch let error as UsageError {
            Terminal.error(error.message, prefix: prefix)
            Terminal.note("\(spec.usageLine(tool: tool))  (see \(prefix) --help)")
            return ExitCode.usage
        } catch let error as BLEError {
            if Interruption.wasRequested {
                Terminal.error("interrupted", prefix: prefix)
                return ExitCode.interrupted
            }
            Terminal.error("\(error.message) (\(error.code))", prefix: prefix)
            return ExitCode.status(for: error)
        } catch let error as Failure {
            Terminal.error(error.description, prefix: prefix)
            return error.status
        } catch {
            Terminal.error("\(error)", prefix: prefix)
            return ExitCode.failure
        }
    }

    static var help: String {
        let width = commands.map(\.spec.name.count).max() ?? 0
        let list = commands.map { "  \(pad($0.spec.name, width))  \($0.spec.summary)" }
        return """
            usage: ble <command> [options] [arguments]

            Bluetooth Low Energy from the command line, through bluetoothd (BlueZ).

            commands:
            \(list.joined(separator: "\n"))

            Every Bluetooth command takes --bus ADDRESS (bluetoothd's D-Bus address; default the system
            bus) and --adapter NAME. Run `ble <command> --help` for a command's options.
            Colours only on a terminal, never with NO_COLOR set.

            \(ExitCode.documentation)
            """
    }
}
