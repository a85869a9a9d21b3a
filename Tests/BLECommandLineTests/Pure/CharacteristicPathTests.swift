import BLE
import Testing

@testable import BLECommandLine

@Suite struct CharacteristicPathTests {
    @Test func uuidsAndNames() throws {
        let short = try CharacteristicPath("2A37")
        #expect(short.service == nil)
        #expect(short.characteristic == .uuid(BluetoothUUID("2A37")))
        let long = try CharacteristicPath("180D/00002a37-0000-1000-8000-00805f9b34fb")
        #expect(long.service == .uuid(BluetoothUUID("180D")))
        #expect(long.characteristic == .uuid(BluetoothUUID("2A37")))
        let named = try CharacteristicPath("heart-rate/Heart_Rate Measurement")
        #expect(named.service == .name("heartrate"))
        #expect(named.characteristic.matches(BluetoothUUID("2A37")))
        #expect(!named.characteristic.matches(BluetoothUUID("2A38")))
        #expect(named.service?.matches(BluetoothUUID("180D")) == true)
    }

    @Test(arguments: ["", "/2A37", "180D/", "a/b/c"])
    func malformed(text: String) {
        #expect(throws: UsageError.self) { try CharacteristicPath(text) }
    }
}

@Suite struct LiveScanTableTests {
    private func row(_ name: String, _ address: String, rssi: Int16 = -50) -> ScanRow {
        var row = ScanRow(name: name, address: address, rssi: rssi)
        row.services = "Heart Rate (180D)"
        return row
    }

    @Test func linesFitTheTerminal() {
        let rows = [row("A rather long device name that goes on", "C4:7C:8D:6A:11:22"), row("B", "D0:5F:B8:00:00:01")]
        let lines = LiveScanTable.lines(rows: rows, status: "scanning", columns: 60, maximumRows: 10)
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("NAME"))
        #expect(lines[1].contains("A rather long device na…"))
        #expect(lines.allSatisfy { $0.count <= 59 })
        #expect(lines[3] == "scanning")
    }

    @Test func extraDevicesAreCounted() {
        let rows = (0..<5).map { row("D\($0)", "00:00:00:00:00:0\($0)") }
        let lines = LiveScanTable.lines(rows: rows, status: "s", columns: 200, maximumRows: 3)
        #expect(lines.count == 1 + 3 + 1 + 1)
        #expect(lines[4] == "… and 2 more")
    }
}
