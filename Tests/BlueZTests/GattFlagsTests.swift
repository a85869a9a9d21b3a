import BlueZ
import Testing

@Suite struct GattFlagsTests {
    @Test func characteristicFlagNamesRoundTrip() {
        #expect(GattCharacteristicFlags.allNames.count == 23)
        for (index, name) in GattCharacteristicFlags.allNames.enumerated() {
            let flag = GattCharacteristicFlags(string: name)
            #expect(flag?.rawValue == 1 << UInt32(index), "\(name)")
            #expect(flag?.strings == [name])
        }
        #expect(GattCharacteristicFlags.writeWithoutResponse.strings == ["write-without-response"])
        #expect(GattCharacteristicFlags.encryptAuthenticatedIndicate.strings == ["encrypt-authenticated-indicate"])
        #expect(GattCharacteristicFlags(string: "x-notify") == nil)
        #expect(GattCharacteristicFlags(string: "READ") == nil)
    }

    @Test func remoteAndServerSets() {
        #expect(
            GattCharacteristicFlags.remoteFlags.strings == [
                "broadcast", "read", "write-without-response", "write", "notify", "indicate",
                "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
            ])
        #expect(GattCharacteristicFlags.serverFlags.strings == GattCharacteristicFlags.allNames)
        #expect(!GattCharacteristicFlags.remoteFlags.contains(.authorize))
    }

    @Test func parseKeepsUnknownStringsInOrder() {
        let (flags, unknown) = GattCharacteristicFlags.parse(["notify", "bogus", "read", "read", "x-indicate", "bogus"])
        #expect(flags == [.read, .notify])
        #expect(unknown == ["bogus", "x-indicate", "bogus"])
        // Known flags come out in bluetoothd's order.
        #expect(flags.strings == ["read", "notify"])
        #expect(flags.description == "read, notify")
    }

    @Test func emptyAndAllFlags() {
        #expect(GattCharacteristicFlags.parse([]).flags.isEmpty)
        let all = GattCharacteristicFlags.parse(GattCharacteristicFlags.allNames)
        #expect(all.flags == .serverFlags)
        #expect(all.unknown.isEmpty)
    }

    @Test func descriptorFlags() {
        #expect(
            GattDescriptorFlags.allNames == [
                "read", "write", "encrypt-read", "encrypt-write", "encrypt-authenticated-read",
                "encrypt-authenticated-write", "secure-read", "secure-write", "authorize",
            ])
        let (flags, unknown) = GattDescriptorFlags.parse(["authorize", "read", "indicate"])
        #expect(flags == [.read, .authorize])
        #expect(unknown == ["indicate"])
        #expect(flags.strings == ["read", "authorize"])
        #expect(GattDescriptorFlags(string: "secure-read") == .secureRead)
        #expect(GattDescriptorFlags(string: "notify") == nil)
    }
}
