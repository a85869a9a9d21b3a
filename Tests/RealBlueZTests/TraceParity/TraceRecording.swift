import BLE
import BlueZ
import DBus
import DBusTestSupport

/// A ``BusMonitor`` on the stage's bus with the renderer that makes its messages a trace, so
/// that a scenario can wait for a step to show in the conversation before taking the next one
/// (which keeps the order of the trace independent of timing).
final class TraceRecording: Sendable {
    let monitor: BusMonitor
    let renderer: TraceRenderer
    private let bus: Connection.Bus

    /// Starts monitoring `stage`'s bus. The driver's own connection is left out of the trace.
    init(_ stage: Stage) async throws {
        bus = stage.bus.dbusBus
        let probe = try await Connection(bus: bus)
        defer { probe.close() }
        guard let daemon = try await probe.nameOwner(of: BlueZService.busName) else {
            throw StageError(description: "no org.bluez on \(bus)")
        }
        monitor = try BusMonitor(bus: bus)
        renderer = TraceRenderer(
            adapterPath: "/org/bluez/\(Stage.centralAdapter)", peerAddress: stage.driver.id.address,
            daemon: daemon.rawValue, excluded: stage.driver.busNames)
    }

    /// The trace so far.
    var lines: [String] { renderer.render(monitor.messages) }

    /// Waits until a line of the trace contains `text`, at or after line `from`.
    func waitFor(_ text: String, from: Int = 0, within timeout: Duration = .seconds(30)) async throws {
        try await waitUntil("\"\(text)\" in the trace", within: timeout) { [self] in
            lines.dropFirst(from).contains { $0.contains(text) }
        }
    }

    /// Ends the recording once everything sent before now has been seen: a marker call that
    /// the bus routes after them. Returns the trace.
    func finish() async throws -> [String] {
        let marker = try await Connection(bus: bus)
        defer { marker.close() }
        _ = try await marker.call(
            destination: try BusName("org.freedesktop.DBus"), path: try ObjectPath("/org/freedesktop/DBus"),
            interface: try InterfaceName("org.freedesktop.DBus.Peer"), member: try MemberName("Ping"),
            timeout: .seconds(10))
        let name = marker.uniqueName
        try await waitUntil("the end marker in the monitor") { [monitor] in
            monitor.messages.contains { $0.sender == name && $0.member?.rawValue == "Ping" }
        }
        monitor.stop()
        return lines
    }
}

extension BLE.Bus {
    /// The same bus for a D-Bus connection of the test's own.
    var dbusBus: Connection.Bus {
        switch self {
        case .system: .system
        case .session: .session
        case .address(let address): .address(address)
        }
    }
}

extension PeripheralDriver {
    /// The unique names of the driver's own connections to the bus (its probes of the
    /// daemon are the test's, not the SDK's).
    var busNames: Set<String> {
        switch self {
        case let simulated as SimulatedPeripheral: [simulated.probe.uniqueName.rawValue]
        case let scripted as ScriptedPeripheral: [scripted.connection.uniqueName.rawValue]
        default: []
        }
    }
}
