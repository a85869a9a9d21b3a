import BLECommandLine
import Foundation

// ble: the swift-ble command-line tool (see `ble --help`; the commands live in BLECommandLine).

let arguments = Array(CommandLine.arguments.dropFirst())
exit(await Interruption.run { [arguments] in await BLETool.main(arguments) })
