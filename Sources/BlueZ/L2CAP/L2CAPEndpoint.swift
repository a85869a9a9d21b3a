/// One end of an LE L2CAP channel: a controller's or a device's address, and its type.
public struct L2CAPEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The address, `AA:BB:CC:DD:EE:FF`.
    public var address: BluetoothAddress
    /// `public` or `random`: the kernel needs it to reach an LE device.
    public var addressType: AddressType

    /// Creates an endpoint.
    public init(address: BluetoothAddress, addressType: AddressType = .public) {
        self.address = address
        self.addressType = addressType
    }

    /// `AA:BB:CC:DD:EE:FF (public)`
    public var description: String { "\(address) (\(addressType))" }
}

/// LE Simplified Protocol/Service Multiplexers (Core 5.3, Vol 3, Part A, §4.22): the port
/// numbers of LE credit-based channels.
public enum L2CAPPSM {
    /// Every valid LE SPSM: 0x0001–0x007F fixed (assigned by the SIG), 0x0080–0x00FF dynamic.
    public static let validRange: ClosedRange<UInt16> = 0x0001...0x00FF
    /// The SPSMs a server may be given by the kernel.
    public static let dynamicRange: ClosedRange<UInt16> = 0x0080...0x00FF
}

/// The security a channel requires of its link (the kernel's `BT_SECURITY` levels).
public enum L2CAPSecurity: UInt8, Sendable, Hashable {
    /// No encryption required.
    case low = 1
    /// An encrypted link (pairing without MITM protection is enough).
    case medium = 2
    /// An encrypted link with an authenticated (MITM-protected) key.
    case high = 3
}
