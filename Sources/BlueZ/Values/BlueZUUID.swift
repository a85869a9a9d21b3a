/// UUID strings as bluetoothd writes them: 128-bit, lower-case, dashed.
///
/// 16- and 32-bit forms expand on the Bluetooth base UUID `0000xxxx-0000-1000-8000-00805f9b34fb`.
public enum BlueZUUID {
    /// The Bluetooth base UUID's suffix.
    public static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// The 128-bit lower-case form of `text` (16-bit `180D`, 32-bit `0000180D`, or 128-bit,
    /// with or without `0x`), or `nil` when it is not a UUID.
    public static func canonical(_ text: String) -> String? {
        // What bluetoothd sends for every object: returned as it is, checked byte by byte
        // (discovery converts a UUID per service, characteristic and descriptor).
        if isCanonical(text) { return text }
        var hex = text.lowercased()
        if hex.hasPrefix("0x") { hex.removeFirst(2) }
        let isHex: (Character) -> Bool = { $0.isHexDigit && $0.isASCII }
        switch hex.count {
        case 4 where hex.allSatisfy(isHex): return "0000" + hex + baseSuffix
        case 8 where hex.allSatisfy(isHex): return hex + baseSuffix
        case 36:
            let parts = hex.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.map(\.count) == [8, 4, 4, 4, 12], parts.allSatisfy({ $0.allSatisfy(isHex) }) else {
                return nil
            }
            return hex
        case 32 where hex.allSatisfy(isHex):
            let characters = Array(hex)
            let cuts = [0, 8, 12, 16, 20, 32]
            return (0..<5).map { String(characters[cuts[$0]..<cuts[$0 + 1]]) }.joined(separator: "-")
        default:
            return nil
        }
    }

    /// Whether `text` is a 128-bit UUID already in canonical form: 36 bytes, lower-case hex,
    /// dashes after 8, 12, 16 and 20 digits.
    static func isCanonical(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count == 36 else { return false }
            for (offset, byte) in bytes.enumerated() {
                switch offset {
                case 8, 13, 18, 23: if byte != UInt8(ascii: "-") { return false }
                default:
                    let digit = (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    let letter = (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
                    if !digit && !letter { return false }
                }
            }
            return true
        } ?? false
    }

    /// The 16-bit short form when `uuid` is on the base UUID, e.g. `0x180D`.
    public static func shortForm(_ uuid: String) -> UInt16? {
        guard let full = canonical(uuid), full.hasPrefix("0000"), full.hasSuffix(baseSuffix) else { return nil }
        return UInt16(full.dropFirst(4).prefix(4), radix: 16)
    }

    /// The bytes an advertisement carries for `uuid`, least significant first: two for a
    /// UUID on the base UUID, sixteen otherwise; nil when it is not a UUID.
    public static func advertisedBytes(_ uuid: String) -> [UInt8]? {
        if let short = shortForm(uuid) { return [UInt8(short & 0xFF), UInt8(short >> 8)] }
        guard let full = canonical(uuid) else { return nil }
        let digits = Array(full.utf8.filter { $0 != UInt8(ascii: "-") })
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes.reversed()
    }
}
