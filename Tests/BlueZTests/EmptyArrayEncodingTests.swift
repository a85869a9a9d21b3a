import BlueZ
import DBus
import Testing

/// Regression: `DBus`'s `Array.dbusValue` encodes an empty `[String]` as `ay` (the empty array
/// passes `as? [UInt8]`), so `UUIDs: []` went out as a byte array. BlueZ encodes arrays itself.
@Suite struct EmptyArrayEncodingTests {
    @Test func emptyStringArraysStayStringArrays() throws {
        let adapter = try Fixture.path(Fixture.adapterText)
        let device = DeviceProperties(address: try BluetoothAddress("00:11:22:33:44:55"), adapter: adapter)
        #expect(device.dbusProperties["UUIDs"] == .array(.string, []))

        let service = GattServiceProperties(uuid: "180d", includes: [])
        #expect(service.dbusProperties["Includes"] == .array(.objectPath, []))

        let manager = LEAdvertisingManagerProperties(supportedInstances: 0, supportedIncludes: [])
        #expect(manager.dbusProperties["SupportedIncludes"] == .array(.string, []))

        var advertisement = LEAdvertisementProperties(type: .peripheral)
        advertisement.serviceUUIDs = []
        #expect(advertisement.dbusProperties["ServiceUUIDs"] == .array(.string, []))

        #expect(DiscoveryFilter(uuids: []).dictionary["UUIDs"] == .array(.string, []))
    }
}
