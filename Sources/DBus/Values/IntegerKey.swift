/// An integer (a call ID, a message serial) as a dictionary key, hashed by one
/// multiplication with the table's seed instead of the standard library's SipHash.
///
/// The I/O loop and the GATT queue look their calls up by ID and serial several times per
/// call; hashing a `UInt64` key runs a whole `Hasher` (about 100 instructions) per look-up.
/// These keys are the process's own counters, not input, so a multiplicative hash spreads
/// them well and nobody can choose them to collide.
package struct IntegerKey: Hashable, Sendable {
    /// The integer.
    package let value: UInt64

    package init(_ value: UInt64) { self.value = value }

    package init(_ value: UInt32) { self.value = UInt64(value) }

    package func hash(into hasher: inout Hasher) { hasher.combine(value) }

    /// What `Set` and `Dictionary` hash with (see ``NameHashing``).
    package func _rawHashValue(seed: Int) -> Int { NameHashing.rawHash(value, seed: seed) }
}
