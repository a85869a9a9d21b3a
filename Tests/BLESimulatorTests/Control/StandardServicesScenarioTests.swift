import BLESimulator
import Foundation
import Testing

/// The `standardServices` key of a scenario's peripheral: absent or true serves Generic Access
/// and Generic Attribute with the advertised values, an object sets them, false leaves them out
/// (and only then may the peripheral declare `1800` or `1801` itself).
@Suite struct StandardServicesScenarioTests {
    private func peripheral(_ json: String) throws -> VirtualPeripheral {
        try JSONDecoder().decode(VirtualPeripheral.self, from: Data(json.utf8))
    }

    @Test func absentOrTrueServesThemWithTheAdvertisedValues() throws {
        #expect(try peripheral(#"{"address": "11:22:33:44:55:66"}"#).standardServices == StandardServices())
        let on = try peripheral(#"{"address": "11:22:33:44:55:66", "standardServices": true}"#)
        #expect(on.standardServices == StandardServices())
        #expect(VirtualPeripheral(address: "11:22:33:44:55:66").standardServices == StandardServices())
    }

    @Test func falseLeavesThemOut() throws {
        #expect(try peripheral(#"{"address": "11:22:33:44:55:66", "standardServices": false}"#).standardServices == nil)
    }

    @Test func anObjectSetsTheGATTNameAndAppearance() throws {
        let json =
            #"{"address": "11:22:33:44:55:66", "name": "adv", "standardServices": {"deviceName": "Polar H10", "appearance": 833}}"#
        let decoded = try peripheral(json)
        #expect(decoded.standardServices == StandardServices(deviceName: "Polar H10", appearance: 833))
        #expect(decoded.name == "adv")
    }

    @Test func aValueOfAnotherTypeIsAnError() {
        #expect(throws: DecodingError.self) {
            try peripheral(#"{"address": "11:22:33:44:55:66", "standardServices": "yes"}"#)
        }
        #expect(throws: DecodingError.self) {
            try peripheral(#"{"address": "11:22:33:44:55:66", "standardServices": {"appearance": "computer"}}"#)
        }
    }

    @Test func declaringAStandardServiceNeedsThemOff() throws {
        for uuid in ["1800", "1801", "00001801-0000-1000-8000-00805f9b34fb"] {
            let services = #""services": [{"uuid": "\#(uuid)"}]"#
            #expect(throws: DecodingError.self, "\(uuid)") {
                try peripheral(#"{"address": "11:22:33:44:55:66", \#(services)}"#)
            }
            let off = try peripheral(#"{"address": "11:22:33:44:55:66", "standardServices": false, \#(services)}"#)
            #expect(off.services.map(\.uuid) == [uuid])
        }
    }

    @Test func encodingRoundTrips() throws {
        var custom = VirtualPeripheral(address: "11:22:33:44:55:66", name: "adv")
        custom.standardServices = StandardServices(deviceName: "gatt")
        var off = custom
        off.standardServices = nil
        for original in [VirtualPeripheral(address: "11:22:33:44:55:66"), custom, off] {
            let data = try JSONEncoder().encode(original)
            #expect(try JSONDecoder().decode(VirtualPeripheral.self, from: data) == original)
        }
        let text = String(decoding: try JSONEncoder().encode(off), as: UTF8.self)
        #expect(text.contains(#""standardServices":false"#))
    }
}
