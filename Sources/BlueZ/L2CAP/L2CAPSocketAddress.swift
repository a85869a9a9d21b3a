/// The kernel's `struct sockaddr_l2` (`<bluetooth/l2cap.h>`), which no system header here
/// declares: family `AF_BLUETOOTH` (u16), PSM (le16), address (6 bytes, least significant
/// first), CID (le16), address type (u8); 14 bytes with the padding.
public struct L2CAPSocketAddress: Sendable, Hashable {
    /// `AF_BLUETOOTH`.
    public static let family: UInt16 = 31
    /// `sizeof(struct sockaddr_l2)`.
    public static let size = 14

    /// The PSM (zero: any, in a bind).
    public var psm: UInt16
    /// The address and its type.
    public var endpoint: L2CAPEndpoint

    /// Creates an address.
    public init(psm: UInt16, endpoint: L2CAPEndpoint) {
        self.psm = psm
        self.endpoint = endpoint
    }

    /// The kernel's `l2_bdaddr_type`: `BDADDR_LE_PUBLIC` (1) or `BDADDR_LE_RANDOM` (2).
    static func kernelType(_ type: AddressType) -> UInt8 { type == .random ? 2 : 1 }

    /// The 14 bytes `bind`/`connect` take.
    public var bytes: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.size)
        bytes[0] = UInt8(truncatingIfNeeded: Self.family)
        bytes[1] = UInt8(truncatingIfNeeded: Self.family >> 8)
        bytes[2] = UInt8(truncatingIfNeeded: psm)
        bytes[3] = UInt8(truncatingIfNeeded: psm >> 8)
        let address = endpoint.address.bytes
        for index in 0..<6 { bytes[4 + index] = address[5 - index] }
        bytes[12] = Self.kernelType(endpoint.addressType)
        return bytes
    }

    /// Reads what `getsockname`/`getpeername`/`accept` wrote; nil for another family or size.
    public init?(bytes: [UInt8]) {
        guard bytes.count >= Self.size, UInt16(bytes[0]) | UInt16(bytes[1]) << 8 == Self.family,
            let address = try? BluetoothAddress(bytes: bytes[4..<10].reversed())
        else { return nil }
        psm = UInt16(bytes[2]) | UInt16(bytes[3]) << 8
        let type: AddressType =
            switch bytes[12] {
            case 2: .random
            case 1: .public
            default: AddressType(rawValue: "bredr")
            }
        endpoint = L2CAPEndpoint(address: address, addressType: type)
    }
}
