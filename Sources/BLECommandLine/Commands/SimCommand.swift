import BLESimulator
import DBusTestSupport
import Foundation

/// `ble sim` and `ble-sim`: the simulated bluetoothd for other processes (bleak, the ble tool,
/// your app). The first line on standard output is `DBUS_SYSTEM_BUS_ADDRESS=<address>`, written
/// once the simulator is ready; it runs until Ctrl-C or SIGTERM.
public enum SimCommand {
    /// The command line both names accept.
    public static let spec = CommandSpec(
        name: "sim", summary: "run the BlueZ simulator for other processes (same as ble-sim)",
        options: [
            .init("--scenario", value: "FILE", "required: peripherals and timing (see Scenarios/README.md)"),
            .init("--bus", value: "ADDRESS", "join this bus instead of starting a private dbus-daemon"),
            .init(
                "--profile", value: "VERSION",
                "the bluetoothd release to imitate: 5.66 or 5.87 (overrides the scenario's)"),
        ],
        details: """
            Other processes drive it through org.swiftble.Simulator1 on /org/swiftble/Simulator, owned by
            org.swiftble.Simulator on the same bus (see Scenarios/README.md), e.g.
              dbus-send --system --print-reply --dest=org.swiftble.Simulator /org/swiftble/Simulator \\
                  org.swiftble.Simulator1.Statistics
            A real adapter (--adapter) has no meaning here: the scenario lists the simulated adapters.
            """)

    /// Runs the simulator until the task is cancelled; `tool` prefixes its messages.
    public static func run(_ arguments: ParsedArguments, tool: String) async throws -> Int32 {
        guard let scenarioPath = arguments.value("--scenario") else { throw UsageError("--scenario is required") }
        let scenario: Scenario
        let profile: BlueZProfile
        do {
            scenario = try Scenario.load(from: URL(fileURLWithPath: scenarioPath))
            if let name = arguments.value("--profile") {
                guard let named = BlueZProfile.named(name) else { throw UsageError("unknown profile \(name)") }
                profile = named
            } else {
                profile = try scenario.blueZProfile()
            }
        } catch let error as UsageError {
            throw error
        } catch let error as FileReadError {
            throw UsageError(error.description)
        } catch {
            throw UsageError("\(scenarioPath): \(error)")
        }
        let privateBus: TestBus?
        do {
            privateBus = arguments.value("--bus") == nil ? try TestBus() : nil
        } catch {
            throw BLETool.Failure(description: "cannot start dbus-daemon: \(error)", status: ExitCode.failure)
        }
        defer { privateBus?.stop() }
        let address = arguments.value("--bus") ?? privateBus?.address ?? ""
        let simulator: Simulator
        do {
            simulator = try await Simulator.start(
                on: .address(address), profile: profile, options: scenario.simulatorOptions,
                peripherals: scenario.peripherals)
        } catch {
            throw BLETool.Failure(description: "cannot start the simulator: \(error)", status: ExitCode.failure)
        }
        defer { simulator.stop() }
        // Whoever started us waits for this line.
        Terminal.line("DBUS_SYSTEM_BUS_ADDRESS=\(address)")
        Terminal.note(
            "\(tool): bluetoothd \(profile.version) simulated with \(scenario.peripherals.count) peripheral(s)")
        let control = SimulatorControlInterface.self
        Terminal.note("\(tool): control \(control.interface) at \(control.objectPath) on \(control.busName)")
        await Interruption.wait()
        return ExitCode.success
    }
}
