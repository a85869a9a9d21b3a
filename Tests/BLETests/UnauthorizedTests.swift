import BLE
import BLESimulator
import DBusTestSupport
import Testing

/// A bus whose policy keeps this process away from bluetoothd, as a restricted distribution
/// policy does: the daemon answers AccessDenied, which is `.unauthorized`, not a transient error.
@Suite("Central unauthorized")
struct UnauthorizedTests {
    @Test("a policy denying calls to org.bluez makes the central unauthorized")
    func deniedByPolicy() async throws {
        let bus = try TestBus(policy: .denying(["org.bluez"]))
        defer { bus.stop() }
        let simulator = try await Simulator.start(
            on: .address(bus.address), peripherals: [SimulatorFixture.heartRateMonitor()])
        defer { simulator.stop() }

        let central = try await Central(bus: .address(bus.address))
        #expect(await central.state == .unauthorized)
        do {
            try await central.waitUntilPoweredOn(timeout: .seconds(2))
            Issue.record("waitUntilPoweredOn succeeded on a bus that denies bluetoothd")
        } catch {
            #expect(error.code == .unauthorized)
            #expect(!error.isTransient)
        }
        do {
            try await central.setPowered(true)
            Issue.record("setPowered succeeded on a bus that denies bluetoothd")
        } catch {
            #expect(error.code == .unauthorized)
            #expect(error.dbusErrorName == "org.freedesktop.DBus.Error.AccessDenied")
        }
        await central.close()
    }

    @Test("the same simulator on an allow-all bus is poweredOn (the policy is what differs)")
    func allowedByPolicy() async throws {
        let bus = try TestBus(policy: .allowAll)
        defer { bus.stop() }
        let simulator = try await Simulator.start(on: .address(bus.address))
        defer { simulator.stop() }
        let central = try await Central(bus: .address(bus.address))
        try await central.waitUntilPoweredOn(timeout: .seconds(5))
        #expect(await central.state == .poweredOn)
        await central.close()
    }
}
