import BLECommandLine
import Foundation

// ble-sim: runs the simulated bluetoothd for other processes (bleak, the ble tool, your app).
// First stdout line: DBUS_SYSTEM_BUS_ADDRESS=<address>. Runs until SIGINT or SIGTERM.
// The same program as `ble sim`; see SimCommand for the options.

let arguments = Array(CommandLine.arguments.dropFirst())
exit(
    await Interruption.run { [arguments] in
        await BLETool.run(SimCommand.spec, arguments, tool: "ble-sim") { try await SimCommand.run($0, tool: "ble-sim") }
    })
