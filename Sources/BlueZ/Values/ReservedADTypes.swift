/// The AD types bluetoothd builds itself from other properties and refuses in raw `Data` and
/// `ScanResponseData` entries: `type_reject_list` of `src/shared/ad.c` (the same in 5.66 and
/// 5.80). An entry of one of these makes the whole advertisement fail to parse.
public enum ReservedADTypes {
    /// Flags, UUID lists, names, TX power, the BR/EDR OOB and address types, solicitation and
    /// service data, appearance, intervals, roles, LE Secure Connections values, features,
    /// mesh, 3D information and manufacturer data.
    public static let all: Set<UInt8> = Set(
        Array(0x01...0x0A) + Array(0x0D...0x12) + Array(0x14...0x23) + Array(0x27...0x2B) + [0x3D, 0xFF])
}
