import Foundation

/// A service to publish with ``PeripheralManager/add(_:timeout:)``, as Core Bluetooth's
/// `CBMutableService`.
public struct MutableService: Sendable, Hashable {
    /// The service UUID (not 0x1800 GAP or 0x1801 GATT: bluetoothd provides those).
    public var uuid: BluetoothUUID
    /// Whether it is a primary service.
    public var isPrimary: Bool
    /// Its characteristics, in the order they get their handles.
    public var characteristics: [MutableCharacteristic]
    /// UUIDs of other services of the same manager this one includes; each must be published
    /// (now or in the same call) or ``PeripheralManager/add(_:timeout:)`` throws `invalidArguments`.
    public var includedServices: [BluetoothUUID]

    /// Creates a service.
    public init(
        uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [MutableCharacteristic] = [],
        includedServices: [BluetoothUUID] = []
    ) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
        self.includedServices = includedServices
    }
}

/// A characteristic of a ``MutableService``, as Core Bluetooth's `CBMutableCharacteristic`.
///
/// With a ``value`` the characteristic is static: the manager answers reads itself and the app
/// never sees them; such a characteristic must not be writable or notify. Without one, every
/// read and write reaches ``PeripheralManager/requests``.
public struct MutableCharacteristic: Sendable, Hashable {
    /// The characteristic UUID.
    public var uuid: BluetoothUUID
    /// What it supports: read, write, write without response, notify, indicate, …
    public var properties: CharacteristicProperties
    /// Security for reads and writes.
    public var permissions: AttributePermissions
    /// A static value, or `nil` for a dynamic one.
    public var value: Data?
    /// Its descriptors (not 0x2902 CCC or 0x2900 Extended Properties: bluetoothd adds them).
    public var descriptors: [MutableDescriptor]

    /// Creates a characteristic.
    public init(
        uuid: BluetoothUUID, properties: CharacteristicProperties, permissions: AttributePermissions = .readWrite,
        value: Data? = nil, descriptors: [MutableDescriptor] = []
    ) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions
        self.value = value
        self.descriptors = descriptors
    }
}

/// A descriptor of a ``MutableCharacteristic``, as Core Bluetooth's `CBMutableDescriptor`.
public struct MutableDescriptor: Sendable, Hashable {
    /// The descriptor UUID, e.g. 0x2901 User Description.
    public var uuid: BluetoothUUID
    /// Security for reads and writes.
    public var permissions: AttributePermissions
    /// A static value answered by the manager, or `nil` to send reads and writes to the app.
    public var value: Data?

    /// Creates a descriptor; a static one is read-only.
    public init(uuid: BluetoothUUID, value: Data? = nil, permissions: AttributePermissions = .readable) {
        self.uuid = uuid
        self.value = value
        self.permissions = permissions
    }
}
