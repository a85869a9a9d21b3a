/// Which AD structures bluetoothd shows in `Device1.AdvertisingData`: every type but those it
/// decodes itself or holds back (its `type_reject_list`, src/shared/ad.c: flags, UUIDs, names,
/// TX power, class, SSP/SMP values, solicitations, service data, addresses, appearance,
/// intervals, role, LE features, channel map, mesh, 3D info, manufacturer data).
enum AdvertisingDataTypes {
    static let withheld: Set<UInt8> = [
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x14,
        0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x27, 0x28,
        0x29, 0x2A, 0x2B, 0x3D, 0xFF,
    ]

    /// The AD structures of `definition` that bluetoothd passes on.
    static func passedOn(_ definition: VirtualPeripheral) -> [UInt8: HexData] {
        definition.advertisingData.filter { !withheld.contains($0.key) }
    }
}
