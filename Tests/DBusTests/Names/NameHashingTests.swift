import Testing

@testable import DBus

/// The name types hash their bytes as one word (``NameHashing``): equal names hash equal
/// however their text was built, and sets and dictionaries of them keep working.
@Suite struct NameHashingTests {
    @Test("equal paths hash equal, whether literal, built or parsed")
    func equalHashEqual() throws {
        let literal = try ObjectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010/char0011")
        let built = try ObjectPath("/org/bluez").appending("hci0").appending("dev_C4_7C_8D_6A_11_22")
            .appending("service0010").appending("char0011")
        let parent = try #require(literal.parent)
        #expect(literal == built)
        #expect(literal.hashValue == built.hashValue)
        #expect(parent.hashValue == (try ObjectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010")).hashValue)
        #expect(ObjectPath.root.hashValue == (try ObjectPath("/")).hashValue)
        let interface = try InterfaceName("org.bluez.GattCharacteristic1")
        #expect(interface.hashValue == (try InterfaceName("org.bluez." + "GattCharacteristic1")).hashValue)
        #expect((try MemberName("ReadValue")).hashValue == (try MemberName("Read" + "Value")).hashValue)
        #expect((try BusName(":1.42")).hashValue == (try BusName(":1." + "42")).hashValue)
    }

    @Test("paths that differ in one byte, anywhere, get different digests")
    func oneByteApart() throws {
        let base = "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010/char0011"
        var digests: Set<UInt64> = [NameHashing.digest(base)]
        for offset in [1, 7, 8, 15, 16, 30, base.utf8.count - 1] {
            var bytes = Array(base.utf8)
            bytes[offset] = bytes[offset] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
            digests.insert(NameHashing.digest(String(decoding: bytes, as: UTF8.self)))
        }
        #expect(digests.count == 8)
        #expect(NameHashing.digest("/a") != NameHashing.digest("/a/"))
        #expect(NameHashing.digest("") != NameHashing.digest("\0"), "the length is part of the digest")
    }

    @Test("a path keeps a digest of its own that tells apart paths one byte apart, the last byte too")
    func storedDigestTellsPathsApart() throws {
        // Every device's path has this length: the digest kept with a path is compared before
        // the texts at each probe of a table, so paths that differ only in their last bytes
        // must not share it (folding the digest's halves once dropped a tail's fifth byte).
        let base = "/org/bluez/hci0/dev_D0_B1_E5_00_03_E7"
        var digests: Set<UInt32> = [try ObjectPath(base).digest]
        for offset in [0, 7, 8, 31, 32, 33, 34, 35, base.utf8.count - 1] {
            var bytes = Array(base.utf8)
            bytes[offset] = bytes[offset] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            digests.insert(ObjectPath(unchecked: String(decoding: bytes, as: UTF8.self)).digest)
        }
        #expect(digests.count == 10)
        // A thousand advertisers' paths, as a scan meets them: no two share a digest.
        let crowd = (0..<1_000).map { number in
            let address = Self.hexByte(number >> 8) + "_" + Self.hexByte(number)
            return ObjectPath(unchecked: "/org/bluez/hci0/dev_D0_B1_E5_00_" + address)
        }
        #expect(Set(crowd.map(\.digest)).count == 1_000)
        // Built apart or parsed, one path keeps one digest, and equal paths stay equal.
        let built = try ObjectPath("/org/bluez/hci0").appending("dev_D0_B1_E5_00_03_E7")
        #expect(built.digest == (try ObjectPath(base)).digest)
        #expect(built == (try ObjectPath(base)))
    }

    @Test("the digest a path keeps leaves a D-Bus value at 24 bytes")
    func digestKeepsValuesSmall() {
        // Every property the mirror holds is a DBusValue in a dictionary's bucket: a 64-bit
        // digest left the `objectPath` case no spare bit for the enum's tag, and made each 32.
        #expect(MemoryLayout<ObjectPath>.size <= 20)
        #expect(MemoryLayout<DBusValue>.stride <= 24)
    }

    private static func hexByte(_ value: Int) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[(value >> 4) & 0xF], digits[value & 0xF]])
    }

    @Test("a table's hash of a name is its digest mixed with the table's seed")
    func rawHashFollowsTheSeed() throws {
        let path = try ObjectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010/char0011")
        let same = try ObjectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010/" + "char0011")
        for seed in [0, 1, -1, 0x5EED, Int.max] {
            #expect(path._rawHashValue(seed: seed) == same._rawHashValue(seed: seed))
        }
        #expect(path._rawHashValue(seed: 1) != path._rawHashValue(seed: 2), "tables with other seeds order apart")
        #expect(path.hashValue == path._rawHashValue(seed: 0))
        let interface = try InterfaceName("org.bluez.Device1")
        let member = try MemberName("PropertiesChanged")
        let bus = try BusName(":1.7")
        func expected(_ text: String) -> Int { NameHashing.rawHash(NameHashing.digest(text), seed: 3) }
        #expect(interface._rawHashValue(seed: 3) == expected("org.bluez.Device1"))
        #expect(member._rawHashValue(seed: 3) == expected("PropertiesChanged"))
        #expect(bus._rawHashValue(seed: 3) == expected(":1.7"))
        // Low bits pick the bucket: names a byte apart must not share them all.
        let buckets = Set((0..<64).map { NameHashing.rawHash(NameHashing.digest("/dev_\($0)"), seed: 7) & 63 })
        #expect(buckets.count > 32)
    }

    @Test("a dictionary of ten thousand device paths finds each one, and no other")
    func manyPaths() throws {
        var index: [ObjectPath: Int] = [:]
        for number in 0..<10_000 {
            index[try ObjectPath("/org/bluez/hci0/dev_B0_00_00_00_\(number / 256)_\(number % 256)")] = number
        }
        #expect(index.count == 10_000)
        for number in stride(from: 0, to: 10_000, by: 37) {
            #expect(index[try ObjectPath("/org/bluez/hci0/dev_B0_00_00_00_\(number / 256)_\(number % 256)")] == number)
        }
        #expect(index[try ObjectPath("/org/bluez/hci0/dev_B0_00_00_00_40_0")] == nil)
    }

    @Test("names compare and order as their texts do: equal or not whatever the lengths, in byte order")
    func equalityAndOrder() throws {
        let texts = [
            "/", "/org", "/org/bluez", "/org/bluez/hci0", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22",
            "/org/bluez/hci0/dev_C4_7C_8D_6A_11_23", "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0010",
            "/org/bluez/hci1", "/org/bluez/hci0_x", "/org/bluez/hci", "/a", "/a/b", "/a_b", "/A",
        ]
        let paths = try texts.map { try ObjectPath($0) }
        for (left, leftText) in zip(paths, texts) {
            for (right, rightText) in zip(paths, texts) {
                #expect((left == right) == (leftText == rightText))
                #expect((left < right) == (leftText < rightText), "\(leftText) < \(rightText)")
            }
        }
        let names = try ["org.bluez.Device1", "org.bluez.Device", "org.bluez.Adapter1", "org.freedesktop.DBus"]
            .map { try InterfaceName($0) }
        for left in names {
            for right in names {
                #expect((left == right) == (left.rawValue == right.rawValue))
                #expect((left < right) == (left.rawValue < right.rawValue))
            }
        }
        #expect(try MemberName("ReadValue") != (try MemberName("ReadValues")))
        #expect(try BusName(":1.42") == (try BusName(":1." + "42")))
    }
}
