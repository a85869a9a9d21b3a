import BlueZ
import Foundation
import Testing

@testable import BLE

/// Transcripts of ``RestorationRecord`` (what state restoration keeps) and of the lifecycle's
/// restored link, without a bus: each change says whether the file is to be written.
@Suite("State restoration transcripts")
struct RestorationRecordTests {
    typealias Subscription = RestorationRecord.Subscription
    static let hr = Subscription(service: "0000180d-0000-1000-8000-00805f9b34fb", characteristic: "2a37", handle: 12)
    static let never = RestorationRecord.Policy(.never)
    static let backoff = RestorationRecord.Policy(.exponentialBackoff(initial: .milliseconds(250), maximumAttempts: 3))
    static let a = PeripheralID(adapter: "hci0", bluetoothAddress: address(0xA))
    static let b = PeripheralID(adapter: "hci0", bluetoothAddress: address(0xB))
    static let c = PeripheralID(
        adapter: "hci0", adapterAddress: address(0x001A_7DDA_7113), bluetoothAddress: address(0xC47C_8D6A_1122),
        addressType: .random)

    static func address(_ raw: UInt64) -> BluetoothAddress {
        guard let address = BluetoothAddress(rawValue: raw) else { preconditionFailure("\(raw) is not an address") }
        return address
    }

    /// Applies one transition (a `mutating` call cannot sit inside `#expect`).
    static func change(_ record: inout RestorationRecord, _ body: (inout RestorationRecord) -> Bool) -> Bool {
        body(&record)
    }

    @Test("connect, subscribe, policy, unsubscribe, disconnect: each change once, repeats change nothing")
    func peripheralTranscript() {
        var record = RestorationRecord(identifier: "gw", adapter: "hci0")
        #expect(Self.change(&record) { $0.connected(Self.a, policy: Self.never) })
        #expect(
            !Self.change(&record) { $0.connected(Self.a, policy: Self.never) }, "a reconnection of a kept peripheral")
        #expect(Self.change(&record) { $0.subscription(Self.hr, of: Self.a, live: true) })
        #expect(!Self.change(&record) { $0.subscription(Self.hr, of: Self.a, live: true) }, "a second iteration")
        #expect(
            !Self.change(&record) { $0.subscription(Self.hr, of: Self.b, live: true) },
            "a peripheral not kept has none")
        #expect(Self.change(&record) { $0.policyChanged(Self.a, to: Self.backoff) })
        #expect(record.peripherals == [.init(id: Self.a, policy: Self.backoff, subscriptions: [Self.hr])])
        #expect(Self.change(&record) { $0.subscription(Self.hr, of: Self.a, live: false) })
        #expect(record.peripherals[0].subscriptions.isEmpty)
        #expect(Self.change(&record) { $0.disconnected(Self.a) })
        #expect(!Self.change(&record) { $0.disconnected(Self.a) })
        #expect(record.peripherals.isEmpty)
    }

    @Test("a scan's filter is kept while it runs")
    func scanTranscript() {
        var record = RestorationRecord(identifier: "gw", adapter: "hci0")
        #expect(Self.change(&record) { $0.scanning(["180d"]) })
        #expect(!Self.change(&record) { $0.scanning(["180d"]) })
        #expect(Self.change(&record) { $0.scanning([]) }, "a scan for every advertiser")
        #expect(Self.change(&record) { $0.scanning(nil) })
        #expect(record.scanServices == nil)
    }

    @Test("a passive scan's filter is kept apart from the active scans'")
    func passiveScanTranscript() {
        var record = RestorationRecord(identifier: "gw", adapter: "hci0")
        #expect(Self.change(&record) { $0.scanning(["180d"], passive: true) })
        #expect(record.scanServices == nil, "no active scan runs")
        #expect(!Self.change(&record) { $0.scanning(["180d"], passive: true) })
        #expect(Self.change(&record) { $0.scanning([]) })
        #expect(record.passiveScanServices == ["180d"] && record.scanServices == [])
        #expect(Self.change(&record) { $0.scanning(nil, passive: true) })
        #expect(record.passiveScanServices == nil)
    }

    @Test("a policy survives the file: durations, limits and the never policy")
    func policyRoundTrip() throws {
        let policies: [ReconnectPolicy] = [
            .never, .exponentialBackoff(), .exponentialBackoff(initial: .milliseconds(250), maximumAttempts: 3),
        ]
        for policy in policies {
            #expect(RestorationRecord.Policy(policy).reconnectPolicy == policy)
        }
        var record = RestorationRecord(identifier: "gw", adapter: "hci0")
        _ = record.connected(Self.c, policy: Self.backoff)
        _ = record.subscription(Self.hr, of: Self.c, live: true)
        let decoded = try JSONDecoder().decode(RestorationRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded == record)
        #expect(decoded.isUsable(for: "gw"))
        #expect(!decoded.isUsable(for: "other"), "another identifier's file is not ours")
    }

    @Test("a restored link: one attempt at once; it failing ends it under the never policy")
    func restoredLinkNever() {
        var link = ConnectionLifecycle<String>(policy: .never)
        #expect(
            ConnectionLifecycleTests.describe(link.restore())
                == ["announce reconnecting(attempt: 1, after: 0.0 seconds)", "reconnect 1"])
        #expect(link.restore().isEmpty, "an attempt is under way")
        #expect(
            ConnectionLifecycleTests.describe(
                link.reconnectFinished(attempt: 1, .failure(BLEError(.timeout, message: "t"))))
                == ["announce reconnectFailed(timeout)"])
    }

    @Test("a restored link under a reconnecting policy: a failed first attempt schedules the next")
    func restoredLinkBackoff() {
        var link = ConnectionLifecycle<String>(policy: ConnectionLifecycleTests.backoff)
        _ = link.restore()
        #expect(
            ConnectionLifecycleTests.describe(
                link.reconnectFinished(attempt: 1, .failure(BLEError(.timeout, message: "t"))))
                == ["schedule reconnect 2"])
        #expect(ConnectionLifecycleTests.describe(link.reconnectDue(attempt: 2)) == ["reconnect 2"])
        #expect(link.reconnectFinished(attempt: 2, .success(())).isEmpty)
    }

    @Test("a linked peripheral is not restored again")
    func restoredWhileLinked() {
        var link = ConnectionLifecycleTests.connected()
        #expect(link.restore().isEmpty)
    }

    @Test("identifiers name files: safe ones pass, others are refused")
    func identifiers() {
        for good in ["hr-gateway", "a", "Gateway_2.state"] {
            #expect(throws: Never.self) { try RestorationStore.validate(good) }
        }
        for bad in ["", ".hidden", "a/b", "../x", "space here", String(repeating: "x", count: 101)] {
            #expect(throws: BLEError.self) { try RestorationStore.validate(bad) }
        }
    }
}
