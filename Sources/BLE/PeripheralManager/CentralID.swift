import BlueZ
import DBus

/// Identifies a remote central that talks to a ``PeripheralManager``: the adapter it is
/// connected to and its Bluetooth address, from the `device` object path bluetoothd names in
/// each request.
public struct CentralID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The adapter name, e.g. `hci0`.
    public let adapter: String
    /// The central's address, `AA:BB:CC:DD:EE:FF`.
    public let address: String

    /// Creates an identifier; throws ``BLEError/Code/invalidArguments`` for a malformed address.
    public init(adapter: String = "hci0", address: String) throws(BLEError) {
        let peripheral = try PeripheralID(adapter: adapter, address: address)
        self.adapter = peripheral.adapter
        self.address = peripheral.address
    }

    /// The central a BlueZ device path (`/org/bluez/hci0/dev_11_22_33_44_55_66`) stands for.
    init?(devicePath path: ObjectPath) {
        guard let address = BlueZPath.deviceAddress(of: path), let adapterPath = BlueZPath.adapter(containing: path),
            let name = adapterPath.elements.last
        else { return nil }
        adapter = String(name)
        self.address = address.description
    }

    /// `hci0/AA:BB:CC:DD:EE:FF`
    public var description: String { "\(adapter)/\(address)" }

    /// Orders by adapter, then address.
    public static func < (lhs: CentralID, rhs: CentralID) -> Bool { lhs.description < rhs.description }
}
