import BlueZ

/// UUID comparison in any of the 16-, 32- or 128-bit spellings.
enum BlueZUUIDMatch {
    static func same(_ a: String, _ b: String) -> Bool {
        guard let left = BlueZUUID.canonical(a), let right = BlueZUUID.canonical(b) else { return a == b }
        return left == right
    }
}
