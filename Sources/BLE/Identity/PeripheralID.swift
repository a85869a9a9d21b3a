import BlueZ

/// Identifies a peripheral: the adapter that sees it and its Bluetooth address. Stable across
/// sessions for public and static random addresses, so apps can store it (it is `Codable`).
///
/// The adapter is named by its own Bluetooth address when the ID comes from the SDK (a scan,
/// a connection, ``Central/knownPeripherals()``): a USB adapter that comes back as `hci1`
/// after being `hci0` is still the same adapter, and a stored ID still finds its peripheral.
/// ``adapter`` keeps the `hciN` name for people. An ID made from text (`hci0/AA:BB:…`) names
/// the adapter by that name only, until the SDK hands out one that knows more.
///
/// Two IDs are equal when their device addresses are, their address types do not differ
/// (where both know one), and they name the same adapter: by its address where both know it,
/// else by name.
public struct PeripheralID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Whether a device address is the public, IEEE-assigned one or a random one (LE).
    public enum AddressType: String, Sendable, Hashable, Codable {
        /// A public address.
        case `public`
        /// A random address (static, or private and resolved by a bond).
        case random
    }

    /// The adapter's name when the ID was made, e.g. `hci0`.
    public let adapter: String
    /// The adapter's Bluetooth address, when known.
    let adapterBluetoothAddress: BluetoothAddress?
    /// The peripheral's Bluetooth address. Addresses are kept as numbers, not text: every
    /// discovery a scan reports carries an ID, and apps key tables by it, so an ID is copied,
    /// hashed and compared far more often than it is printed (two 17-byte strings were two
    /// allocations per ID, reference counted on every copy, and hashed byte by byte).
    let bluetoothAddress: BluetoothAddress
    /// The peripheral's address type, when known.
    public let addressType: AddressType?

    /// The adapter's Bluetooth address, `AA:BB:CC:DD:EE:FF`, when known: what names the adapter.
    public var adapterAddress: String? { adapterBluetoothAddress?.description }
    /// The peripheral's address, `AA:BB:CC:DD:EE:FF`.
    public var address: String { bluetoothAddress.description }

    /// Creates an identifier; throws ``BLEError/Code/invalidArguments`` for a malformed address
    /// or adapter name.
    public init(
        adapter: String = "hci0", address: String, addressType: AddressType? = nil, adapterAddress: String? = nil
    ) throws(BLEError) {
        guard (try? BlueZPath.adapter(named: adapter)) != nil else {
            throw BLEError(.invalidArguments, message: "\"\(adapter)\" is not an adapter name like hci0")
        }
        guard let parsed = try? BluetoothAddress(address) else {
            throw BLEError(.invalidArguments, message: "\"\(address)\" is not a Bluetooth address")
        }
        var adapterParsed: BluetoothAddress?
        if let adapterAddress {
            guard let value = try? BluetoothAddress(adapterAddress) else {
                throw BLEError(
                    .invalidArguments, message: "\"\(adapterAddress)\" is not an adapter's Bluetooth address")
            }
            adapterParsed = value
        }
        self.init(
            adapter: adapter, adapterAddress: adapterParsed, bluetoothAddress: parsed, addressType: addressType)
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

    init(
        adapter: String, adapterAddress: BluetoothAddress? = nil, bluetoothAddress: BluetoothAddress,
        addressType: AddressType? = nil
    ) {
        self.adapter = adapter
        self.adapterBluetoothAddress = adapterAddress
        self.bluetoothAddress = bluetoothAddress
        self.addressType = addressType
    }

    /// The ID of a device BlueZ reports, on the adapter `adapter` names.
    init(adapter: AdapterIdentity, address: BluetoothAddress, type: BlueZ.AddressType?) {
        self.adapter = adapter.name
        self.adapterBluetoothAddress = adapter.address
        self.bluetoothAddress = address
        // Compared with BlueZ's two values, not looked up by raw value: the enum's
        // `init(rawValue:)` searches its cases' texts, for every advertisement a scan decodes.
        switch type {
        case BlueZ.AddressType.public?: addressType = .public
        case BlueZ.AddressType.random?: addressType = .random
        default: addressType = nil
        }
    }

    /// `hci0/AA:BB:CC:DD:EE:FF`
    public var description: String { "\(adapter)/\(address)" }

    /// A stable order, for sorting: by device address, then adapter.
    /// The addresses' numeric order is their text's (fixed-width, upper-case hexadecimal).
    public static func < (lhs: PeripheralID, rhs: PeripheralID) -> Bool {
        if lhs.bluetoothAddress != rhs.bluetoothAddress { return lhs.bluetoothAddress < rhs.bluetoothAddress }
        return (lhs.adapterAddress ?? lhs.adapter) < (rhs.adapterAddress ?? rhs.adapter)
    }

    /// See the type's discussion: the adapter by address where both know it, else by name.
    public static func == (lhs: PeripheralID, rhs: PeripheralID) -> Bool {
        guard lhs.bluetoothAddress == rhs.bluetoothAddress else { return false }
        if let left = lhs.addressType, let right = rhs.addressType, left != right { return false }
        return lhs.isOnAdapter(name: rhs.adapter, address: rhs.adapterBluetoothAddress)
    }

    /// The device address alone: equal IDs always share it, whatever they know of the adapter.
    public func hash(into hasher: inout Hasher) { hasher.combine(bluetoothAddress.rawValue) }

    /// Whether this ID names the adapter called `name` with address `address` (nil: unknown).
    func isOnAdapter(name: String, address: BluetoothAddress?) -> Bool {
        if let own = adapterBluetoothAddress, let address { return own == address }
        return adapter == name
    }

    // MARK: Codable

    private enum CodingKeys: String, CodingKey {
        case adapter, adapterAddress, address, addressType
    }

    /// Decodes an ID as encoded by this version or an earlier one (adapter name and address
    /// only), or from its text (`hci0/AA:BB:CC:DD:EE:FF`); malformed values are a
    /// `DecodingError`.
    public init(from decoder: any Decoder) throws {
        if let text = try? decoder.singleValueContainer().decode(String.self) {
            do {
                try self.init(text)
            } catch {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: error.message))
            }
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(
                adapter: try container.decode(String.self, forKey: .adapter),
                address: try container.decode(String.self, forKey: .address),
                addressType: try container.decodeIfPresent(AddressType.self, forKey: .addressType),
                adapterAddress: try container.decodeIfPresent(String.self, forKey: .adapterAddress))
        } catch let error as BLEError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Encodes the adapter's name and address and the device's address and type.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(adapter, forKey: .adapter)
        try container.encodeIfPresent(adapterAddress, forKey: .adapterAddress)
        try container.encode(address, forKey: .address)
        try container.encodeIfPresent(addressType, forKey: .addressType)
    }
}

/// The adapter a manager follows: its name and, while bluetoothd reports it, its address.
struct AdapterIdentity: Sendable, Hashable {
    let name: String
    let address: BluetoothAddress?
}
