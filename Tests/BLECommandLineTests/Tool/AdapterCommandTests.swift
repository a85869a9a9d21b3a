import BLE
import Foundation
import Testing

@testable import BLECommandLine

/// `ble power` and `ble devices` against the simulator: what bluetoothd holds, without scanning.
@Suite(.serialized) struct AdapterCommandTests {
    @Test func powerShowsAndSwitches() async throws {
        try await CLIFixture.run { fixture in
            #expect(try await fixture.ble("power").output == "hci0: on\n")
            let off = try await fixture.ble("power", "off")
            #expect(off.status == 0, "\(off.errors)")
            #expect(off.output == "hci0: off\n")
            // A fresh central sees it off, and the tool works on an adapter that is off.
            let central = try await Central(bus: .address(fixture.bus.address))
            #expect(await central.state == .poweredOff)
            await central.close()
            #expect(try await fixture.ble("power").output == "hci0: off\n")
            #expect(try await fixture.ble("power", "--json").output == "{\"adapter\":\"hci0\",\"powered\":false}\n")
            #expect(try await fixture.ble("power", "on").output == "hci0: on\n")
        }
    }

    @Test func powerRefusesAnythingButOnOrOff() async throws {
        try await CLIFixture.run { fixture in
            let outcome = try await fixture.ble("power", "sideways")
            #expect(outcome.status == ExitCode.usage)
            #expect(outcome.errors.hasPrefix("ble power: error: power takes on or off, not \"sideways\"\n"))
        }
    }

    @Test func devicesListsWhatBluetoothdKnows() async throws {
        try await CLIFixture.run { fixture in
            #expect(try await fixture.ble("devices").output.isEmpty, "nothing is known before a scan")
            // A scan until both were seen makes bluetoothd know them (it keeps them after).
            let central = try await Central(bus: .address(fixture.bus.address))
            var seen: Set<String> = []
            for try await discovery in central.scan() {
                seen.insert(discovery.id.address)
                if seen.count == 2 { break }
            }
            let plain = try await fixture.ble("devices")
            #expect(plain.status == 0, "\(plain.errors)")
            #expect(plain.output == "\(CLIFixture.monitor)  Test HRM\n\(CLIFixture.thermometer)  Thermo\n")
            // Connected devices say so.
            let peripheral = try await central.connect(try PeripheralID(address: CLIFixture.monitor))
            let json = try await fixture.ble("devices", "--json")
            let first = try #require(json.output.split(separator: "\n").first)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
            #expect(object["address"] as? String == CLIFixture.monitor)
            #expect(object["name"] as? String == "Test HRM")
            #expect(object["connected"] as? Bool == true)
            #expect(object["paired"] as? Bool == false)
            #expect(object["adapter"] as? String == "hci0")
            try await peripheral.disconnect()
            await central.close()
        }
    }

    @Test func connectLeavesTheLinkUpAndDisconnectTakesItDown() async throws {
        try await CLIFixture.run { fixture in
            let connect = try await fixture.ble("connect", CLIFixture.monitor)
            #expect(connect.status == 0, "\(connect.errors)")
            #expect(connect.output == "\(CLIFixture.monitor): connected\n")
            #expect(try await fixture.isConnected(CLIFixture.monitor), "the link outlives the tool")
            let devices = try await fixture.ble("devices")
            #expect(devices.output.contains("\(CLIFixture.monitor)  Test HRM  connected"))
            let disconnect = try await fixture.ble("disconnect", CLIFixture.monitor)
            #expect(disconnect.status == 0, "\(disconnect.errors)")
            #expect(disconnect.output == "\(CLIFixture.monitor): disconnected\n")
            #expect(try await !fixture.isConnected(CLIFixture.monitor))
            // Again, on a device that is not connected: nothing to do, no error.
            #expect(try await fixture.ble("disconnect", CLIFixture.monitor).status == 0)
        }
    }

    @Test func infoShowsOneDeviceWithoutConnecting() async throws {
        try await CLIFixture.run { fixture in
            let unknown = try await fixture.ble("info", CLIFixture.monitor)
            #expect(unknown.status == ExitCode.notFound)
            #expect(unknown.errors.hasPrefix("ble info: error: bluetoothd does not know \(CLIFixture.monitor)"))
            // Looked up by name: the tool scans for it.
            let info = try await fixture.ble("info", "Test HRM")
            #expect(info.status == 0, "\(info.errors)")
            let lines = info.output.split(separator: "\n").map(String.init)
            #expect(lines.first == "\(CLIFixture.monitor)  Test HRM")
            #expect(lines.contains("  connected: no, paired: no, trusted: no"))
            #expect(lines.contains { $0.hasPrefix("  RSSI: ") && $0.hasSuffix(" dBm") }, "\(lines)")
            #expect(lines.contains("  services: Heart Rate (180D)"), "\(lines)")
            #expect(try await !fixture.isConnected(CLIFixture.monitor), "info connects to nothing")
            let json = try await fixture.ble("info", CLIFixture.monitor, "--json")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            #expect(object["services"] as? [String] == ["180D"])
        }
    }
}
