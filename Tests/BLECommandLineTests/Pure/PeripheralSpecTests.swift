import BLE
import Foundation
import Testing

@testable import BLECommandLine

@Suite struct PeripheralSpecTests {
    private func parse(_ json: String) throws(SpecError) -> PeripheralSpec {
        try PeripheralSpec(json: Data(json.utf8))
    }

    private func error(_ json: String) -> SpecError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func theExampleParses() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                "Examples/serve/heart-rate.json")
        let spec = try PeripheralSpec(json: try Data(contentsOf: url))
        #expect(spec.name == "swift-ble heart rate")
        #expect(spec.advertisement.services == [BluetoothUUID("180D")])
        #expect(spec.advertisement.manufacturerData == [0xFFFF: Data([0x01, 0x02])])
        #expect(spec.advertisement.appearance == 832)
        #expect(spec.services.map(\.uuid) == [BluetoothUUID("180D"), BluetoothUUID("180F")])
        let measurement = spec.services[0].characteristics[0]
        #expect(measurement.properties == [.notify])
        #expect(measurement.notify?.intervalMs == 1000)
        #expect(measurement.notify?.values.count == 4)
        #expect(spec.services[0].characteristics[1].value == Data([1]))
        #expect(spec.services[0].characteristics[1].descriptors.first?.value == Data("Body Sensor Location".utf8))
        #expect(spec.services[0].characteristics[2].onWrite == .store)
    }

    @Test func defaultsAdvertiseThePrimaryServices() throws {
        let spec = try parse(
            """
            {"services": [
              {"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"]}]},
              {"uuid": "1809", "primary": false, "characteristics": [{"uuid": "2A1D", "properties": ["read"]}]}
            ]}
            """)
        #expect(spec.name == nil)
        #expect(spec.advertisement.services == [BluetoothUUID("180F")])
        #expect(spec.services[0].characteristics[0].value.isEmpty)
        #expect(spec.services[0].characteristics[0].onWrite == .store)
    }

    @Test func valuesInEveryFormat() throws {
        let spec = try parse(
            """
            {"services": [{"uuid": "180F", "characteristics": [
              {"uuid": "2A19", "properties": ["read"], "value": {"uint16": 300}},
              {"uuid": "2A1A", "properties": ["read"], "value": {"int8": [-1, 2]}},
              {"uuid": "2A1B", "properties": ["read"], "value": {"base64": "AUg="}},
              {"uuid": "2A1C", "properties": ["read"], "value": {"utf8": "hi"}},
              {"uuid": "2A1D", "properties": ["read"], "value": {"uint32": "1 2"}}
            ]}]}
            """)
        let values = spec.services[0].characteristics.map(\.value)
        #expect(values[0] == Data([0x2C, 0x01]))
        #expect(values[1] == Data([0xFF, 0x02]))
        #expect(values[2] == Data([0x01, 0x48]))
        #expect(values[3] == Data("hi".utf8))
        #expect(values[4] == Data([1, 0, 0, 0, 2, 0, 0, 0]))
    }

    @Test(arguments: [
        ("{", ""),
        ("[]", ""),
        (#"{"services": []}"#, "services"),
        (#"{"servics": []}"#, ""),
        (#"{"services": [{"uuid": "xyz", "characteristics": []}]}"#, "services[0].uuid"),
        (#"{"services": [{"uuid": "180F"}]}"#, "services[0].characteristics"),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19"}]}]}"#,
            "services[0].characteristics[0].properties"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read", "reed"]}]}]}"#,
            "services[0].characteristics[0].properties[1]"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "value": {"hex": "0"}}]}]}"#,
            "services[0].characteristics[0].value.hex"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "value": {"uint8": 256}}]}]}"#,
            "services[0].characteristics[0].value.uint8"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "value": {"float": 1}}]}]}"#,
            "services[0].characteristics[0].value"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "notify": {"intervalMs": 100}}]}]}"#,
            "services[0].characteristics[0].notify"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["notify"], "notify": {"intervalMs": 1}}]}]}"#,
            "services[0].characteristics[0].notify.intervalMs"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "onWrite": "keep"}]}]}"#,
            "services[0].characteristics[0].onWrite"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "descriptors": [{"uuid": "2902"}]}]}]}"#,
            "services[0].characteristics[0].descriptors[0].uuid"
        ),
        (
            #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": "read"}]}]}"#,
            "services[0].characteristics[0].properties"
        ),
        (
            #"{"advertise": {"manufacturerData": {"Apple": {"hex": "00"}}}, "services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"]}]}]}"#,
            "advertise.manufacturerData"
        ),
        (
            #"{"name": "", "services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"]}]}]}"#,
            "name"
        ),
    ])
    func errorsNameTheirKey(json: String, path: String) throws {
        let found = try #require(error(json), "\(json) was accepted")
        #expect(found.path == path, "\(found)")
        #expect(!found.message.isEmpty)
    }

    @Test func unknownKeysAreErrorsWithTheKnownOnes() throws {
        let found = try #require(
            error(
                #"{"services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "vaule": {"hex": "00"}}]}]}"#
            ))
        #expect(found.path == "services[0].characteristics[0]")
        #expect(found.message.contains("\"vaule\""))
        #expect(found.message.contains("value"))
    }
}
