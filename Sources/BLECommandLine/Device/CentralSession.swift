import BLE
import Foundation

/// A central opened for one command, with the checks that turn a missing bluetoothd or adapter
/// into one clear error at once instead of a wait.
struct CentralSession {
    let central: Central
    let options: CommonOptions

    /// Opens the central on `options.bus` and checks the adapter is usable: powered on, or
    /// merely present when `poweredOffIsFine` (for the commands that list or switch it).
    /// `centralOptions` for a command that needs its own (a pairing handler).
    static func open(
        _ options: CommonOptions, poweredOffIsFine: Bool = false, centralOptions: CentralOptions = CentralOptions()
    ) async throws(BLEError) -> CentralSession {
        let central = try await Central(bus: options.bus, adapter: options.adapter, options: centralOptions)
        let session = CentralSession(central: central, options: options)
        do {
            let state = await central.state
            if !poweredOffIsFine || state != .poweredOff { try await session.checkReady() }
        } catch {
            await central.close()
            throw error
        }
        return session
    }

    /// Opens a session (see ``open(_:poweredOffIsFine:centralOptions:)``), runs `body` with it
    /// and closes it on every path; a failure once the bus itself went away becomes that.
    static func run<Result: Sendable>(
        _ options: CommonOptions, poweredOffIsFine: Bool = false, centralOptions: CentralOptions = CentralOptions(),
        _ body: (CentralSession) async throws -> Result
    ) async throws -> Result {
        let session = try await open(options, poweredOffIsFine: poweredOffIsFine, centralOptions: centralOptions)
        let result: Result
        do {
            result = try await body(session)
        } catch {
            await session.close()
            throw session.busLoss ?? error
        }
        await session.close()
        return result
    }

    private func checkReady() async throws(BLEError) {
        let state = await central.state
        if state == .poweredOn { return }
        let adapters = state == .unsupported ? await central.adapters() : []
        if let failure = Readiness.failure(state, adapter: central.adapterName, adapters: adapters, bus: options.bus) {
            throw failure
        }
        // bluetoothd restarting: give it a moment.
        try await central.waitUntilPoweredOn(timeout: .seconds(3))
    }

    /// Closes the central; links it opened are closed by ``disconnect(_:)`` first.
    func close() async { await central.close() }

    /// The error to end with once the bus itself went away (a command then stops at once with
    /// one line and ``ExitCode/bluetoothUnavailable``, whatever it was doing), else nil.
    var busLoss: BLEError? {
        central.isBusLost ? BLEError(.bluetoothUnavailable, message: "the system bus went away") : nil
    }

    /// Finds the device `text` names: an address (`AA:BB:CC:DD:EE:FF`, or `hci1/AA:…`) or an
    /// advertised name (exact, case-insensitive), scanning for up to the timeout for a name.
    func resolve(_ text: String) async throws -> PeripheralID {
        if let id = try? PeripheralID(text) {
            guard text.contains("/") else { return try PeripheralID(adapter: central.adapterName, address: id.address) }
            guard id.adapter == central.adapterName else {
                throw UsageError("\(text) is on \(id.adapter) but the command uses \(central.adapterName) (--adapter)")
            }
            return id
        }
        if text.contains(":") && text.count == 17 { throw UsageError("\"\(text)\" is not a Bluetooth address") }
        let wanted = text.lowercased()
        if let known = await central.knownPeripherals().first(where: { $0.name?.lowercased() == wanted }) {
            return known.id
        }
        return try await scanForName(text)
    }

    /// Scans until a device advertises the name `text` (case-insensitive), or not found at the timeout.
    private func scanForName(_ text: String) async throws(BLEError) -> PeripheralID {
        let wanted = text.lowercased()
        let scan = central.scan()
        let timeout = options.timeout
        let found: PeripheralID?
        do {
            found = try await Progress.run("looking for \"\(text)\"") { () throws(BLEError) -> PeripheralID? in
                try await Deadline.run(timeout) { () throws(BLEError) -> PeripheralID? in
                    for try await discovery in scan where discovery.name?.lowercased() == wanted { return discovery.id }
                    return nil
                }
            }
        } catch {
            guard error.code == .timeout else { throw error }
            found = nil
        }
        guard let found else {
            throw BLEError(.notFound, message: "no device named \"\(text)\" seen within \(Describe.seconds(timeout))")
        }
        return found
    }

    /// Connects (with a progress indicator), turning "never seen" into a not-found error.
    func connect(_ id: PeripheralID) async throws(BLEError) -> Peripheral {
        let central = self.central
        let timeout = options.timeout
        do {
            return try await Progress.run("connecting to \(id.address)") { () throws(BLEError) in
                try await central.connect(id, timeout: timeout)
            }
        } catch  where error.code == .timeout {
            let known = await central.knownPeripherals().contains { $0.id == id }
            guard known else {
                throw BLEError(.notFound, message: "no device \(id.address) seen within \(Describe.seconds(timeout))")
            }
            throw error
        }
    }

    /// Disconnects, from a task of its own so that it also works when the command was cancelled.
    func disconnect(_ peripheral: Peripheral) async {
        await Task { try? await peripheral.disconnect() }.value
    }
}

/// Runs work with a deadline, failing with ``BLEError/Code/timeout``; `nil` when it ended early.
enum Deadline {
    static func run<T: Sendable>(
        _ timeout: Duration, _ body: @escaping @Sendable () async throws(BLEError) -> T?
    ) async throws(BLEError) -> T? {
        let outcome = await withTaskGroup(of: Result<T?, BLEError>?.self) { group in
            group.addTask {
                do throws(BLEError) {
                    return .success(try await body())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    return nil
                }
                return .failure(BLEError(.timeout, message: "timed out"))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let outcome else { throw BLEError(.cancelled, message: "interrupted") }
        return try outcome.get()
    }
}
