import BlueZ

/// Identifies a peripheral: the adapter that sees it and its Bluetooth address. Stable across
/// sessions for public and static random addresses, so apps can store it.
public struct PeripheralID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The adapter name, e.g. `hci0`.
    public let adapter: String
    /// The address, `AA:BB:CC:DD:EE:FF`.
    public let address: String

    /// Creates an identifier; throws ``BLEError/Code/invalidArguments`` for a malformed
    /// address or adapter name.
    public init(adapter: String = "hci0", address: String) throws(BLEError) {
        guard (try? BlueZPath.adapter(named: adapter)) != nil else {
            throw BLEError(.invalidArguments, message: "\"\(adapter)\" is not an adapter name like hci0")
        }
        guard let parsed = try? BluetoothAddress(address) else {
            throw BLEError(.invalidArguments, message: "\"\(address)\" is not a Bluetooth address")
        }
        self.adapter = adapter
        self.address = parsed.description
    }

    /// Parses `hci0/AA:BB:CC:DD:EE:FF` or a bare address (on `hci0`).
    public init(_ text: String) throws(BLEError) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        if parts.count == 2 {
            try self.init(adapter: parts[0], address: parts[1])
        } else {
            try self.init(address: text)
        }
    }

    init(adapter: String, bluetoothAddress: BluetoothAddress) {
        self.adapter = adapter
        self.address = bluetoothAddress.description
    }

    /// `hci0/AA:BB:CC:DD:EE:FF`
    public var description: String { "\(adapter)/\(address)" }

    /// A stable order, for sorting.
    public static func < (lhs: PeripheralID, rhs: PeripheralID) -> Bool { lhs.description < rhs.description }

    var bluetoothAddress: BluetoothAddress? { try? BluetoothAddress(address) }
}
