import Foundation

// ble: the swift-ble command-line tool. Commands: demo, sim (more arrive with the CLI issue).

let arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first ?? "--help"
let rest = Array(arguments.dropFirst())

switch command {
case "demo":
    exit(await DemoCommand.run(rest))
case "sim":
    exit(await SimCommand.run(rest))
case "-h", "--help", "help":
    print(
        """
        usage: ble <command> [options]

        commands:
          demo   walk through scan → connect → discover → read → subscribe → write → disconnect,
                 on a private simulated bluetoothd unless --real is given
          sim    run the BlueZ simulator (same as ble-sim)

        Run `ble <command> --help` for a command's options.
        """)
    exit(0)
default:
    Terminal.error("unknown command \"\(command)\"; try `ble --help`")
    exit(ExitCode.usage)
}
