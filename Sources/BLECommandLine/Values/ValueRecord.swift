import BLE
import Foundation

/// One characteristic value as a JSON object (`ble read --json`, and one per line for
/// `ble notify --json`): when, whose, the bytes in hex, and the value in the chosen format
/// (absent when the bytes are not of that format).
struct ValueRecord: JSONLineRecord {
    var time: String
    var address: String
    var characteristic: String
    var value: String
    var formatted: String?

    init(_ value: Data, of characteristic: Characteristic, address: String, format: ValueFormat, at date: Date = Date())
    {
        time = Describe.timestamp(date)
        self.address = address
        self.characteristic = characteristic.uuid.description
        self.value = ValueFormat.hex(value).replacingOccurrences(of: " ", with: "")
        formatted = format == .hex ? nil : try? format.format(value)
    }
}
