import BLESimulator
import DBus
import DBusTestSupport
import Foundation

// ble-sim: runs the simulated bluetoothd for other processes (bleak, the ble tool, your app).
// First stdout line: DBUS_SYSTEM_BUS_ADDRESS=<address>. Runs until SIGINT or SIGTERM.

let usage = """
    usage: ble-sim --scenario FILE.json [--bus ADDRESS] [--profile 5.66|5.87]
      --scenario  peripherals and timing (see Scenarios/README.md)
      --bus       join this bus instead of starting a private dbus-daemon
      --profile   the bluetoothd release to imitate (overrides the scenario's)
    Other processes drive it through org.swiftble.Simulator1 on /org/swiftble/Simulator, owned by
    org.swiftble.Simulator on the same bus (see Scenarios/README.md), e.g.
      dbus-send --system --print-reply --dest=org.swiftble.Simulator /org/swiftble/Simulator \\
          org.swiftble.Simulator1.Statistics
    """

func fail(_ message: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("ble-sim: \(message)\n".utf8))
    exit(code)
}

var scenarioPath: String?
var busAddress: String?
var profileName: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--scenario": scenarioPath = arguments.next()
    case "--bus": busAddress = arguments.next()
    case "--profile": profileName = arguments.next()
    case "-h", "--help":
        print(usage)
        exit(0)
    default: fail("unknown argument \(argument)\n\(usage)")
    }
}
guard let scenarioPath else { fail("--scenario is required\n\(usage)") }

let scenario: Scenario
let profile: BlueZProfile
do {
    scenario = try Scenario.load(from: URL(fileURLWithPath: scenarioPath))
    if let profileName {
        guard let named = BlueZProfile.named(profileName) else { fail("unknown profile \(profileName)") }
        profile = named
    } else {
        profile = try scenario.blueZProfile()
    }
} catch {
    fail("cannot read \(scenarioPath): \(error)")
}

signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let stopRequested = AsyncStream<Int32>.makeStream()
let signalQueue = DispatchQueue(label: "ble-sim.signals")
let signalSources = [SIGINT, SIGTERM].map { number in
    let source = DispatchSource.makeSignalSource(signal: number, queue: signalQueue)
    source.setEventHandler { stopRequested.continuation.yield(number) }
    source.resume()
    return source
}

let privateBus: TestBus?
do {
    privateBus = busAddress == nil ? try TestBus() : nil
} catch {
    fail("cannot start dbus-daemon: \(error)", code: 1)
}
let address = busAddress ?? privateBus?.address ?? ""

do {
    let simulator = try await Simulator.start(
        on: .address(address), profile: profile, options: scenario.simulatorOptions,
        peripherals: scenario.peripherals)
    // Written unbuffered: whoever started us waits for this line.
    FileHandle.standardOutput.write(Data("DBUS_SYSTEM_BUS_ADDRESS=\(address)\n".utf8))
    FileHandle.standardError.write(
        Data(
            "ble-sim: bluetoothd \(profile.version) simulated with \(scenario.peripherals.count) peripheral(s)\n"
                .utf8))
    let control = SimulatorControlInterface.self
    FileHandle.standardError.write(
        Data("ble-sim: control \(control.interface) at \(control.objectPath) on \(control.busName)\n".utf8))
    var waiter = stopRequested.stream.makeAsyncIterator()
    _ = await waiter.next()
    simulator.stop()
    privateBus?.stop()
    _ = signalSources
} catch {
    privateBus?.stop()
    fail("cannot start the simulator: \(error)", code: 1)
}
