import BlueZ
import DBus
import Testing

/// ``BlueZPath/kind(of:)`` reads paths byte by byte; these compare it, path for path, with a
/// plain reading of the layout rules (split into elements, each checked as text), over
/// thousands of valid and near-valid paths.
@Suite struct BlueZPathParserTests {
    /// The layout rules written the obvious way.
    static func reference(_ path: ObjectPath) -> BlueZPath.Kind? {
        let elements = path.rawValue.split(separator: "/")
        func hex(_ text: Substring, prefix: String) -> UInt16? {
            guard text.hasPrefix(prefix) else { return nil }
            let digits = text.dropFirst(prefix.count)
            guard digits.count == 4, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
            return UInt16(digits, radix: 16)
        }
        guard elements.count >= 2, elements[0] == "org", elements[1] == "bluez" else { return nil }
        if elements.count == 2 { return .manager }
        let adapter = elements[2]
        guard adapter.hasPrefix("hci") else { return nil }
        let digits = adapter.dropFirst(3)
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            !(digits.count > 1 && digits.first == "0"), let index = Int(digits)
        else { return nil }
        if elements.count == 3 { return .adapter(index: index) }
        let device = elements[3]
        guard device.hasPrefix("dev_") else { return nil }
        let groups = device.dropFirst(4).split(separator: "_", omittingEmptySubsequences: false)
        guard groups.count == 6, groups.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isHexDigit } })
        else { return nil }
        let value = groups.reduce(UInt64(0)) { $0 << 8 | UInt64(UInt8($1, radix: 16) ?? 0) }
        guard let address = BluetoothAddress(rawValue: value) else { return nil }
        if elements.count == 4 { return .device(address) }
        guard let service = hex(elements[4], prefix: "service") else { return nil }
        if elements.count == 5 { return .service(handle: service) }
        guard let characteristic = hex(elements[5], prefix: "char") else { return nil }
        if elements.count == 6 { return .characteristic(handle: characteristic) }
        guard let descriptor = hex(elements[6], prefix: "desc") else { return nil }
        if elements.count == 7 { return .descriptor(handle: descriptor) }
        return nil
    }

    static let seeds = [
        "/org/bluez", "/org/bluez/hci0", "/org/bluez/hci12", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22",
        "/org/bluez/hci0/dev_c4_7c_8d_6a_11_22/service000a",
        "/org/bluez/hci1/dev_00_11_22_33_44_55/service0001/char0002",
        "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service00ff/char0100/desc0101",
    ]

    /// Every seed with one byte replaced, removed or doubled, and every prefix of it.
    static func variants() -> [String] {
        let replacements: [Character] = ["0", "9", "a", "F", "g", "_", "/", "x"]
        var out: Set<String> = []
        for seed in seeds {
            let characters = Array(seed)
            for index in characters.indices {
                out.insert(String(characters[..<index]))
                var removed = characters
                removed.remove(at: index)
                out.insert(String(removed))
                var doubled = characters
                doubled.insert(characters[index], at: index)
                out.insert(String(doubled))
                for replacement in replacements {
                    var replaced = characters
                    replaced[index] = replacement
                    out.insert(String(replaced))
                }
            }
            out.insert(seed + "/desc0001")
            out.insert(seed + "/x")
        }
        return out.sorted()
    }

    @Test("the byte parser agrees with the layout rules on every valid and near-valid path")
    func agreesWithReference() {
        var compared = 0
        var kinds: Set<String> = []
        for text in Self.variants() {
            guard let path = try? ObjectPath(text) else { continue }
            let kind = BlueZPath.kind(of: path)
            #expect(kind == Self.reference(path), "\(text)")
            compared += 1
            kinds.insert(kind.map { "\($0)".prefix(while: { $0 != "(" }).description } ?? "none")
        }
        // The comparison covered every kind, and paths that are none of them.
        #expect(kinds == ["manager", "adapter", "device", "service", "characteristic", "descriptor", "none"])
        #expect(compared > 1000)
    }
}
