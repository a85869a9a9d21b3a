/// The sub-type of a random LE address, from the two most significant bits of its first byte
/// (Core spec Vol 6 Part B §1.3).
///
/// Only meaningful when the device's `AddressType` is `random`; a public address has no
/// sub-type even though its bits can be read the same way.
public enum RandomAddressKind: Sendable, Hashable {
    /// Top bits `11`: a static random address, stable for a power cycle or longer.
    case staticRandom
    /// Top bits `01`: a resolvable private address (RPA), which rotates and can be resolved
    /// with the peer's IRK.
    case resolvablePrivate
    /// Top bits `00`: a non-resolvable private address (NRPA).
    case nonResolvablePrivate
    /// Top bits `10`: reserved for future use.
    case reserved
}

extension BluetoothAddress {
    /// The random-address sub-type these bits would mean if the address is random.
    public var randomAddressKind: RandomAddressKind {
        switch rawValue >> 46 {
        case 0b11: .staticRandom
        case 0b01: .resolvablePrivate
        case 0b00: .nonResolvablePrivate
        default: .reserved
        }
    }

    /// Whether a random address with these bits is private (resolvable or non-resolvable),
    /// as bluetoothd's `device_address_is_private` decides.
    ///
    /// bluetoothd keeps devices with a private address temporary forever: their objects vanish
    /// `TemporaryTimeout` seconds after the link drops (bluez-dbus-api.md §3.7).
    public var isRandomPrivate: Bool {
        let kind = randomAddressKind
        return kind == .resolvablePrivate || kind == .nonResolvablePrivate
    }

    /// Whether an address of `type` is private: random with the RPA or NRPA bits.
    public func isPrivate(addressType type: AddressType) -> Bool {
        type == .random && isRandomPrivate
    }
}
