import Foundation

/// `ble sim`: runs ble-sim, which sits beside this binary.
enum SimCommand {
    static func run(_ arguments: [String]) async -> Int32 {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let simulator = here.appendingPathComponent("ble-sim")
        guard FileManager.default.isExecutableFile(atPath: simulator.path) else {
            Terminal.error("ble-sim not found next to ble (build it with `swift build --product ble-sim`)")
            return ExitCode.failure
        }
        let process = Process()
        process.executableURL = simulator
        process.arguments = arguments
        do {
            try process.run()
        } catch {
            Terminal.error("cannot start ble-sim: \(error)")
            return ExitCode.failure
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
