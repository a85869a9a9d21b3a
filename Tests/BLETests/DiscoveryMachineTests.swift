import BlueZ
import DBus
import Testing

@testable import BLE

/// Transcripts of ``DiscoveryMachine`` (the scans of one central sharing BlueZ's discovery
/// session), without a bus: events in, actions out. Waiters are strings; filters are shown by
/// their UUIDs and RSSI threshold.
@Suite("Discovery transcripts")
struct DiscoveryMachineTests {
    typealias Machine = DiscoveryMachine<String>

    static let all = ScanRequest(services: [], options: ScanOptions())
    static let heartRate = ScanRequest(services: [BluetoothUUID("180D")], options: ScanOptions())
    static let battery = ScanRequest(services: [BluetoothUUID("180F")], options: ScanOptions(rssiThreshold: -70))
    static let refused = BLEError(.notPermitted, message: "refused")

    static func describe(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .send(.setFilter(let filter)):
                var shown: [String] = []
                if case .array(_, let uuids)? = filter[DiscoveryFilter.Key.uuids] {
                    shown.append(
                        "uuids "
                            + uuids.map { if case .string(let text) = $0 { text } else { "?" } }.joined(separator: ","))
                }
                if case .int16(let rssi)? = filter[DiscoveryFilter.Key.rssi] { shown.append("rssi \(rssi)") }
                return "set filter" + (shown.isEmpty ? "" : " (" + shown.joined(separator: "; ") + ")")
            case .send(.start): return "start"
            case .send(.stop): return "stop"
            case .send(.restart): return "restart"
            case .resume(let waiter, .success): return "resume \(waiter) ok"
            case .resume(let waiter, .failure(let error)): return "resume \(waiter) \(error.code)"
            case .fail(let ids, let error): return "fail scans \(ids) \(error.code)"
            }
        }
    }

    static func answered(_ machine: inout Machine, serial: UInt32 = 0) -> [String] {
        describe(machine.finished(.success(()), serial: serial, adapterDiscovering: true))
    }

    @Test("the first scan sets its filter, then starts; it is resumed once discovery runs")
    func firstScan() {
        var machine = Machine()
        #expect(
            Self.describe(machine.add(1, Self.heartRate, "A", refusal: nil)) == [
                "set filter (uuids 0000180d-0000-1000-8000-00805f9b34fb)"
            ])
        #expect(Self.answered(&machine) == ["start"])
        #expect(Self.answered(&machine, serial: 7) == ["resume A ok"])
        #expect(machine.isRunning)
    }

    @Test("a scan arriving while a call is in flight waits; the next calls serve both")
    func secondScanDuringStart() {
        var machine = Machine()
        _ = machine.add(1, Self.heartRate, "A", refusal: nil)
        #expect(Self.describe(machine.add(2, Self.battery, "B", refusal: nil)) == [], "one call at a time")
        #expect(
            Self.answered(&machine)
                == ["set filter (uuids 0000180d-0000-1000-8000-00805f9b34fb,0000180f-0000-1000-8000-00805f9b34fb)"],
            "the union of the two: the RSSI threshold only when every scan has one")
        #expect(Self.answered(&machine) == ["start"])
        #expect(Self.answered(&machine) == ["resume A ok", "resume B ok"])
    }

    @Test("a scan joining a running discovery with the same filter is told at once")
    func joinRunning() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine)
        #expect(Self.describe(machine.add(2, Self.all, "B", refusal: nil)) == ["resume B ok"])
    }

    @Test("the last scan leaving stops discovery; earlier ones do not")
    func lastStops() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine)
        _ = machine.add(2, Self.all, "B", refusal: nil)
        #expect(Self.describe(machine.remove(1, "A")) == ["resume A ok"])
        #expect(Self.describe(machine.remove(2, "B")) == ["stop"])
        #expect(!machine.isRunning)
        #expect(Self.answered(&machine) == ["resume B ok"])
        #expect(Self.describe(machine.remove(2, "B")) == ["resume B ok"], "unknown: at once")
    }

    @Test("a scan leaving while its own start is in flight: the stop follows the start")
    func leaveDuringStart() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        #expect(Self.describe(machine.remove(1, "R")) == [])
        #expect(Self.answered(&machine) == ["stop"])
        #expect(Self.answered(&machine) == ["resume A ok", "resume R ok"])
    }

    @Test("a refused filter or start fails the scans that waited for it; the adapter can scan again after")
    func failures() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        #expect(
            Self.describe(machine.finished(.failure(Self.refused), serial: nil, adapterDiscovering: false))
                == ["resume A notPermitted"])
        #expect(Self.describe(machine.add(2, Self.all, "B", refusal: nil)) == ["set filter"])
        _ = Self.answered(&machine)
        #expect(
            Self.describe(machine.finished(.failure(Self.refused), serial: nil, adapterDiscovering: false))
                == ["resume B notPermitted"])
        #expect(!machine.isRunning)
    }

    @Test("a restart bluetoothd refuses ends the running scans with the error; the start is not made again")
    func refusedRestart() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = machine.add(2, Self.all, "B", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine, serial: 10)
        #expect(Self.describe(machine.stoppedUnderUs(serial: 11, adapterDiscovering: false)) == ["restart"])
        #expect(Self.answered(&machine) == ["start"])
        // Before, the failed start was sent again at once, for as long as bluetoothd refused it.
        #expect(
            Self.describe(machine.finished(.failure(Self.refused), serial: nil, adapterDiscovering: false))
                == ["fail scans [1, 2] notPermitted"])
        #expect(!machine.isRunning)
        #expect(Self.describe(machine.remove(1, "A")) == ["resume A ok"], "the ended scan leaves without a call")
        #expect(Self.describe(machine.add(3, Self.all, "C", refusal: nil)) == ["start"], "a new scan asks again")
    }

    @Test("a filter refused to a new scan fails it alone; the scans running keep their discovery")
    func refusedFilterKeepsRunningScans() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine, serial: 10)
        _ = machine.remove(1, "A")
        _ = Self.answered(&machine)
        _ = machine.add(2, Self.heartRate, "B", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine, serial: 12)
        #expect(
            Self.describe(machine.add(3, Self.battery, "C", refusal: nil)) == [
                "set filter (uuids 0000180d-0000-1000-8000-00805f9b34fb,0000180f-0000-1000-8000-00805f9b34fb)"
            ])
        #expect(
            Self.describe(machine.finished(.failure(Self.refused), serial: nil, adapterDiscovering: true))
                == ["resume C notPermitted"])
        #expect(machine.isRunning)
    }

    @Test("a refused filter when discovery must be set up again ends the scans that need it")
    func refusedFilterAfterReset() {
        var machine = Machine()
        _ = machine.add(1, Self.heartRate, "A", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine, serial: 10)
        machine.reset()
        #expect(
            Self.describe(machine.add(2, Self.heartRate, "B", refusal: nil)).first
                == "set filter (uuids 0000180d-0000-1000-8000-00805f9b34fb)")
        #expect(
            Self.describe(machine.finished(.failure(Self.refused), serial: nil, adapterDiscovering: false))
                == ["resume B notPermitted", "fail scans [1] notPermitted"])
    }

    @Test("InProgress to a start: this connection's session runs already")
    func startInProgress() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        let busy = BLEError(.inProgress, message: "Operation already in progress")
        #expect(
            Self.describe(machine.finished(.failure(busy), serial: nil, adapterDiscovering: true)) == ["resume A ok"])
        #expect(machine.isRunning)
    }

    @Test("an adapter that cannot scan refuses at once")
    func refusal() {
        var machine = Machine()
        let off = BLEError(.poweredOff, message: "cannot scan: poweredOff")
        #expect(Self.describe(machine.add(1, Self.all, "A", refusal: off)) == ["resume A poweredOff"])
        #expect(Self.describe(machine.remove(1, "A")) == ["resume A ok"])
    }

    @Test("Discovering=false after this central's start: stopped and started again; one from before is ignored")
    func stoppedUnderUs() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine, serial: 10)
        #expect(!machine.mayHaveStoppedUnderUs(serial: 9), "announced before the start was answered")
        #expect(machine.mayHaveStoppedUnderUs(serial: 11))
        #expect(Self.describe(machine.stoppedUnderUs(serial: 11, adapterDiscovering: true)) == [], "discovering again")
        #expect(Self.describe(machine.stoppedUnderUs(serial: 11, adapterDiscovering: false)) == ["restart"])
        #expect(Self.answered(&machine) == ["start"])
        #expect(Self.answered(&machine, serial: 12) == [])
        #expect(machine.isRunning)
    }

    @Test("a stop under this central seen while a call is in flight is looked at after it")
    func stoppedDuringCall() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine, serial: 10)
        _ = machine.add(2, Self.heartRate, "B", refusal: nil)
        #expect(Self.describe(machine.add(3, Self.battery, "C", refusal: nil)) == ["resume C ok"], "A wants everything")
        #expect(
            Self.describe(machine.remove(1, "A")) == [
                "set filter (uuids 0000180d-0000-1000-8000-00805f9b34fb,0000180f-0000-1000-8000-00805f9b34fb)"
            ])
        #expect(Self.describe(machine.stoppedUnderUs(serial: 11, adapterDiscovering: false)) == [])
        #expect(
            Self.describe(machine.finished(.success(()), serial: 12, adapterDiscovering: false))
                == ["restart"])
        #expect(Self.answered(&machine) == ["start"])
        #expect(Self.answered(&machine, serial: 13) == ["resume A ok"])
    }

    @Test("bluetoothd leaving: nothing runs, the filter is set again by the next scan")
    func reset() {
        var machine = Machine()
        _ = machine.add(1, Self.all, "A", refusal: nil)
        _ = Self.answered(&machine)
        _ = Self.answered(&machine)
        machine.reset()
        #expect(!machine.isRunning)
        #expect(Self.describe(machine.add(2, Self.all, "B", refusal: nil)) == ["set filter"])
    }
}
