import BlueZ
import DBus
import Testing

@Suite struct BlueZPathTests {
    @Test func adapterPaths() throws {
        #expect(try BlueZPath.adapter(index: 0).rawValue == "/org/bluez/hci0")
        #expect(try BlueZPath.adapter(index: 12).rawValue == "/org/bluez/hci12")
        #expect(try BlueZPath.adapter(named: "hci1").rawValue == "/org/bluez/hci1")
        #expect(throws: DBusError.self) { try BlueZPath.adapter(index: -1) }
        for name in ["hci", "hcix", "hci01", "HCI0", "hci-1", "bt0", ""] {
            let error = #expect(throws: DBusError.self) { try BlueZPath.adapter(named: name) }
            #expect(error?.code == .invalidValue)
        }
        #expect(BlueZPath.adapterIndex(of: try Fixture.path("/org/bluez/hci3")) == 3)
        #expect(BlueZPath.adapterIndex(of: try Fixture.path("/org/bluez")) == nil)
        #expect(BlueZPath.adapterIndex(of: try Fixture.path("/org/bluez/hci03")) == nil)
        #expect(BlueZPath.adapterIndex(of: try Fixture.path("/com/bluez/hci0")) == nil)
    }

    @Test func devicePathsFromAddresses() throws {
        let adapter = try BlueZPath.adapter(index: 0)
        let path = try BlueZPath.device(address: "c4:7c:8d:6a:11:22", adapter: adapter)
        #expect(path.rawValue == "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22")
        #expect(BlueZPath.deviceAddress(of: path) == (try BluetoothAddress("C4:7C:8D:6A:11:22")))
        #expect(try BlueZPath.device(BluetoothAddress("C4:7C:8D:6A:11:22"), adapter: adapter) == path)
    }

    @Test(arguments: ["C4:7C:8D:6A:11", "C4-7C-8D-6A-11-22", "dev_C4_7C_8D_6A_11_22", "zz:7c:8d:6a:11:22"])
    func malformedAddressesAreRejected(_ text: String) throws {
        let adapter = try BlueZPath.adapter(index: 0)
        let error = #expect(throws: DBusError.self) { try BlueZPath.device(address: text, adapter: adapter) }
        #expect(error?.code == .invalidValue)
    }

    @Test(arguments: [
        "/org/bluez/hci0/dev_C4_7C_8D_6A_11",
        "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22_33",
        "/org/bluez/hci0/device_C4_7C_8D_6A_11_22",
        "/org/bluez/hci0/dev_C47C8D6A1122",
        "/org/bluez/dev_C4_7C_8D_6A_11_22",
        "/org/bluez/hci0/dev_G4_7C_8D_6A_11_22",
    ])
    func malformedDevicePathsDoNotParse(_ text: String) throws {
        #expect(BlueZPath.deviceAddress(of: try Fixture.path(text)) == nil)
    }

    @Test func gattPathsUseFourLowerCaseHexDigits() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let service = try BlueZPath.service(handle: 0x000A, device: device)
        let characteristic = try BlueZPath.characteristic(handle: 0x00BC, service: service)
        let descriptor = try BlueZPath.descriptor(handle: 0xFFFF, characteristic: characteristic)
        #expect(service.rawValue == Fixture.deviceText + "/service000a")
        #expect(characteristic.rawValue == Fixture.deviceText + "/service000a/char00bc")
        #expect(descriptor.rawValue == Fixture.deviceText + "/service000a/char00bc/descffff")
        #expect(BlueZPath.serviceHandle(of: service) == 0x000A)
        #expect(BlueZPath.characteristicHandle(of: characteristic) == 0x00BC)
        #expect(BlueZPath.descriptorHandle(of: descriptor) == 0xFFFF)
        // Each parser only answers for its own level.
        #expect(BlueZPath.serviceHandle(of: characteristic) == nil)
        #expect(BlueZPath.characteristicHandle(of: descriptor) == nil)
        #expect(BlueZPath.descriptorHandle(of: service) == nil)
    }

    @Test(arguments: [
        Fixture.deviceText + "/service0a",
        Fixture.deviceText + "/service00000a",
        Fixture.deviceText + "/service00g0",
        Fixture.deviceText + "/serv000a",
        Fixture.deviceText + "/char000a",
    ])
    func malformedServicePathsDoNotParse(_ text: String) throws {
        #expect(BlueZPath.serviceHandle(of: try Fixture.path(text)) == nil)
    }

    @Test func upperCaseHexIsAccepted() throws {
        #expect(BlueZPath.serviceHandle(of: try Fixture.path(Fixture.deviceText + "/service00AB")) == 0xAB)
    }

    @Test func kinds() throws {
        let address = try BluetoothAddress("C4:7C:8D:6A:11:22")
        let cases: [(String, BlueZPath.Kind?)] = [
            ("/", nil),
            ("/org", nil),
            ("/org/bluez", .manager),
            ("/org/bluez/hci0", .adapter(index: 0)),
            (Fixture.deviceText, .device(address)),
            (Fixture.deviceText + "/service0001", .service(handle: 1)),
            (Fixture.deviceText + "/service0001/char0002", .characteristic(handle: 2)),
            (Fixture.deviceText + "/service0001/char0002/desc0003", .descriptor(handle: 3)),
            (Fixture.deviceText + "/service0001/char0002/desc0003/x", nil),
            (Fixture.deviceText + "/char0002", nil),
            ("/org/bluez/hci0/service0001", nil),
            ("/com/example/app/service0", nil),
        ]
        for (text, kind) in cases {
            #expect(BlueZPath.kind(of: try Fixture.path(text)) == kind, "\(text)")
        }
    }

    @Test func containingDeviceAndAdapter() throws {
        let device = try Fixture.path(Fixture.deviceText)
        let adapter = try Fixture.path(Fixture.adapterText)
        let descriptor = try Fixture.path(Fixture.deviceText + "/service0001/char0002/desc0003")
        #expect(BlueZPath.device(containing: descriptor) == device)
        #expect(BlueZPath.device(containing: device) == device)
        #expect(BlueZPath.device(containing: adapter) == nil)
        #expect(BlueZPath.adapter(containing: descriptor) == adapter)
        #expect(BlueZPath.adapter(containing: adapter) == adapter)
        #expect(BlueZPath.adapter(containing: try Fixture.path("/org/bluez")) == nil)
        #expect(BlueZPath.device(containing: try Fixture.path("/com/example/service0001")) == nil)
    }

    @Test func deviceTextOfValuePaths() throws {
        let characteristic = try Fixture.path(Fixture.deviceText + "/service0001/char0002")
        #expect(BlueZPath.deviceText(containing: characteristic) == Substring(Fixture.deviceText))
        let descriptor = try Fixture.path(Fixture.deviceText + "/service0001/char0002/desc0003")
        #expect(BlueZPath.deviceText(containing: descriptor) == Substring(Fixture.deviceText))
        #expect(BlueZPath.deviceText(containing: try Fixture.path(Fixture.deviceText)) == Substring(Fixture.deviceText))
        #expect(BlueZPath.deviceText(containing: try Fixture.path(Fixture.adapterText)) == nil)
        #expect(BlueZPath.deviceText(containing: try Fixture.path("/org/bluez/hci0/other_1/service0001")) == nil)
        #expect(BlueZPath.deviceText(containing: try Fixture.path("/com/example/hci0/dev_AA/char0001")) == nil)
    }
}
