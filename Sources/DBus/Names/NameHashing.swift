import Glibc

/// Hashing and comparison for the validated name types (object paths, interface, member and
/// bus names).
///
/// Their text is ASCII by validation, so equal names have equal bytes, and a digest of the
/// bytes is a sound hash. It is fed to the `Hasher` as one word: the standard library hashes a
/// `String` a byte at a time (SipHash), which made looking a path up in the object mirror cost
/// several hundred instructions for a path like
/// `/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010/char0011`, and the mirror and the signal
/// routes look paths up on every signal.
///
/// `Set` and `Dictionary` ask a key for `_rawHashValue(seed:)`, which by default runs a whole
/// `Hasher` (seeding, one word, finalisation: about as much again as the digest) per lookup.
/// The names answer it with the digest mixed with the table's seed instead; `hash(into:)`
/// stays for names hashed as part of other values.
enum NameHashing {
    /// A 64-bit digest of `text`'s bytes, mixed a word at a time, with its length.
    static func digest(_ text: String) -> UInt64 {
        if let digest = text.utf8.withContiguousStorageIfAvailable({ digest(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        var copy = text
        return copy.withUTF8 { digest(UnsafeRawBufferPointer($0)) }
    }

    private static func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var state = UInt64(truncatingIfNeeded: bytes.count) &* multiplier
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            state = (state ^ word) &* multiplier
            state ^= state >> 29
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        state = (state ^ tail) &* multiplier
        return state ^ (state >> 32)
    }

    /// Whether two names are spelt alike: their lengths first (a native or small string knows
    /// its own), then the texts. `String`'s `==` compares the texts of unequal strings however
    /// their lengths differ (about a hundred instructions), and the SDK compares names of
    /// different lengths all the time: a device's path against its adapter's, `Device1`
    /// against D-Bus's own interfaces, on every advertisement a scan sees.
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs == rhs
    }

    /// Whether `lhs` sorts before `rhs`, by their bytes: the same order as `String`'s for
    /// names, which validation keeps to ASCII, without its Unicode comparison.
    static func less(_ lhs: String, _ rhs: String) -> Bool {
        let ordered = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right -> Bool in
                let common = min(left.count, right.count)
                var order: Int32 = 0
                if common > 0, let first = left.baseAddress, let second = right.baseAddress {
                    order = memcmp(first, second, common)
                }
                return order < 0 || (order == 0 && left.count < right.count)
            }
        }
        return (ordered ?? nil) ?? (lhs < rhs)
    }

    /// `digest` in 32 bits, what a path keeps of it (``ObjectPath/digest``): its high half,
    /// the high half of the last multiplication, which every byte of the text reaches. Not the
    /// halves xored: the low half is the product's low half xored with that high half, so the
    /// two give back the product's low bits alone, which miss a tail's bytes past its fourth
    /// (the last byte of every device's path, and paths one byte apart shared a digest).
    static func folded(_ digest: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: digest >> 32)
    }

    /// `digest` mixed with a table's per-instance seed, its high bits folded into the low ones
    /// that pick a bucket.
    static func rawHash(_ digest: UInt64, seed: Int) -> Int {
        var state = (digest ^ UInt64(truncatingIfNeeded: seed)) &* 0x9E37_79B9_7F4A_7C15
        state ^= state >> 32
        return Int(truncatingIfNeeded: state)
    }
}

extension ObjectPath {
    /// Equal when spelt alike: the digests made with the paths first, then the texts, lengths
    /// first (see ``NameHashing``).
    public static func == (lhs: ObjectPath, rhs: ObjectPath) -> Bool {
        lhs.digest == rhs.digest && NameHashing.equal(lhs.rawValue, rhs.rawValue)
    }

    /// Hashes the path's bytes as one word, its digest (see ``NameHashing``).
    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    /// What `Set` and `Dictionary` hash with: the path's digest and their seed, no `Hasher`.
    public func _rawHashValue(seed: Int) -> Int { NameHashing.rawHash(UInt64(digest), seed: seed) }
}

extension InterfaceName {
    /// Equal when spelt alike, lengths compared first (see ``NameHashing``).
    public static func == (lhs: InterfaceName, rhs: InterfaceName) -> Bool {
        NameHashing.equal(lhs.rawValue, rhs.rawValue)
    }

    /// Hashes the name's bytes as one word (see ``NameHashing``).
    public func hash(into hasher: inout Hasher) { hasher.combine(NameHashing.digest(rawValue)) }

    /// What `Set` and `Dictionary` hash with: the name's digest and their seed, no `Hasher`.
    public func _rawHashValue(seed: Int) -> Int { NameHashing.rawHash(NameHashing.digest(rawValue), seed: seed) }
}

extension MemberName {
    /// Equal when spelt alike, lengths compared first (see ``NameHashing``).
    public static func == (lhs: MemberName, rhs: MemberName) -> Bool { NameHashing.equal(lhs.rawValue, rhs.rawValue) }

    /// Hashes the name's bytes as one word (see ``NameHashing``).
    public func hash(into hasher: inout Hasher) { hasher.combine(NameHashing.digest(rawValue)) }

    /// What `Set` and `Dictionary` hash with: the name's digest and their seed, no `Hasher`.
    public func _rawHashValue(seed: Int) -> Int { NameHashing.rawHash(NameHashing.digest(rawValue), seed: seed) }
}

extension BusName {
    /// Equal when spelt alike, lengths compared first (see ``NameHashing``).
    public static func == (lhs: BusName, rhs: BusName) -> Bool { NameHashing.equal(lhs.rawValue, rhs.rawValue) }

    /// Hashes the name's bytes as one word (see ``NameHashing``).
    public func hash(into hasher: inout Hasher) { hasher.combine(NameHashing.digest(rawValue)) }

    /// What `Set` and `Dictionary` hash with: the name's digest and their seed, no `Hasher`.
    public func _rawHashValue(seed: Int) -> Int { NameHashing.rawHash(NameHashing.digest(rawValue), seed: seed) }
}
