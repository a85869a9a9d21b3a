import BlueZ

extension BlueZProfile {
    /// Services a built-in plugin claims (`gatt_db_service_set_claimed`), canonical UUIDs: GAP
    /// `1800`, HID `1812`, Scan Parameters `1813`, MIDI, the LE-audio services (PACS, ASCS,
    /// BASS, VCS, CSIS, MICS, MCS, TBS, TMAS); from 5.80 also Battery `180F` and Device
    /// Information `180A`, whose plugins were no longer `external` (Scenarios/README.md).
    public var claimedServiceUUIDs: Set<String> {
        var short = ["1800", "1812", "1813", "1850", "184E", "184F", "1844", "1846", "184D", "1848", "184B", "1855"]
        if exportsClaimedServices { short += ["180F", "180A"] }
        var uuids = Set(short.compactMap(BlueZUUID.canonical))
        uuids.insert("03b80e5a-ede8-4b33-a751-6ce34ec4c700")
        return uuids
    }

    /// The gap plugin reads the peer's Device Name and Appearance once per device object (≥ 5.77,
    /// commit 0dc5bb2ed, the release that also kept connected temporaries); 5.66 forgets the
    /// service at every disconnection and reads again at every connection.
    public var readsGenericAccessOnce: Bool { keepsConnectedTemporaries }
}
