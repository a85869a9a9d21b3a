import BLE
import Testing

extension AgainstBluetoothd {
    /// Finding the peripheral by its advertised service, connecting, discovering its services.
    @Suite("Scan, connect, discover")
    struct ScanConnectTests {
        @Test("a scan for the service finds the peripheral with its name and service")
        func scanWithServiceFilter() async throws {
            try await Stage.run { stage in
                let central = try await stage.central()
                let id = stage.driver.id
                let scan = central.scan(services: [TestPeripheralLayout.service])
                let discovery = try await within(.seconds(30), "a scan finding \(id)") {
                    for try await discovery in scan where discovery.id == id { return discovery }
                    throw StageError(description: "the scan ended")
                }
                #expect(discovery.advertisement.serviceUUIDs.contains(TestPeripheralLayout.service))
                #expect(discovery.name == TestPeripheralLayout.localName)
            }
        }

        @Test("connect resolves the services; discovery lists the characteristics with their properties")
        func connectAndDiscover() async throws {
            try await Stage.runConnected { stage, peripheral in
                #expect(await peripheral.isConnected)
                let services = try await peripheral.discoverServices([TestPeripheralLayout.service])
                let service = try #require(services.first)
                #expect(services.count == 1)
                #expect(service.isPrimary)
                let found = Set(service.characteristics.map(\.uuid))
                #expect(found == Set(TestPeripheralLayout.characteristics.map(\.uuid)))
                let notifying = try await stage.characteristic(TestPeripheralLayout.notifying, of: peripheral)
                #expect(notifying.properties == [.read, .notify])
                let indicating = try await stage.characteristic(TestPeripheralLayout.indicating, of: peripheral)
                #expect(indicating.properties == [.read, .indicate])
                let command = try await stage.characteristic(TestPeripheralLayout.writeWithoutResponse, of: peripheral)
                #expect(command.properties == [.read, .writeWithoutResponse])
            }
        }
    }
}
