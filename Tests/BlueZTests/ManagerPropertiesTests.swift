import BlueZ
import DBus
import Testing

@Suite struct ManagerPropertiesTests {
    @Test func propertylessInterfacesAcceptAnything() throws {
        let extra = Fixture.variants(["Whatever": .int32(1)])
        #expect(try GattManagerProperties(properties: [:]) == GattManagerProperties())
        #expect(try GattManagerProperties(properties: extra).dbusProperties.isEmpty)
        #expect(try AgentManagerProperties(properties: extra) == AgentManagerProperties())
        var manager = GattManagerProperties()
        try manager.apply(changed: extra, invalidated: ["Whatever"])
        var agents = AgentManagerProperties()
        try agents.apply(changed: extra, invalidated: [])
        #expect(AgentManagerProperties().dbusProperties.isEmpty)
        #expect(GattManagerProperties.interface == BlueZInterface.gattManager1)
        #expect(AgentManagerProperties.interface == BlueZInterface.agentManager1)
    }

    @Test func battery() throws {
        var battery = try BatteryProperties(properties: Fixture.variants(["Percentage": .byte(87)]))
        #expect(battery.percentage == 87)
        #expect(battery.source == nil)
        try battery.apply(
            changed: ["Percentage": .variant(.byte(86)), "Source": .variant(.string("GATT Battery Service"))],
            invalidated: [])
        #expect(battery == BatteryProperties(percentage: 86, source: "GATT Battery Service"))
        try battery.apply(changed: [:], invalidated: ["Source", "Percentage"])
        #expect(battery == BatteryProperties(percentage: 86))
        #expect(battery.dbusProperties == ["Percentage": .byte(86)])
        let error = #expect(throws: DBusError.self) {
            try BatteryProperties(properties: Fixture.variants(["Percentage": .uint32(1)]))
        }
        #expect(error?.message == "org.bluez.Battery1.Percentage: expected y, got u")
        #expect(throws: DBusError.self) { try BatteryProperties(properties: [:]) }
    }

    @Test func interfacesOfTheTypes() {
        #expect(AdapterProperties.interface == BlueZInterface.adapter1)
        #expect(DeviceProperties.interface == BlueZInterface.device1)
        #expect(GattServiceProperties.interface == BlueZInterface.gattService1)
        #expect(GattCharacteristicProperties.interface == BlueZInterface.gattCharacteristic1)
        #expect(GattDescriptorProperties.interface == BlueZInterface.gattDescriptor1)
        #expect(LEAdvertisingManagerProperties.interface == BlueZInterface.leAdvertisingManager1)
        #expect(LEAdvertisementProperties.interface == BlueZInterface.leAdvertisement1)
        #expect(BatteryProperties.interface == BlueZInterface.battery1)
    }
}
