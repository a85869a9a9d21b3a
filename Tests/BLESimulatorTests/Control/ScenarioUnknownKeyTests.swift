import BLESimulator
import Foundation
import Testing

/// A misspelt scenario key is an error naming the key and where it is, never a silent default.
@Suite struct ScenarioUnknownKeyTests {
    private func decode(_ json: String) throws -> Scenario {
        try JSONDecoder().decode(Scenario.self, from: Data(json.utf8))
    }

    /// The unknown key and path the decoding error reports, or nil if decoding succeeded or
    /// failed otherwise.
    private func unknownKey(in json: String) -> (key: String, path: String)? {
        do {
            _ = try decode(json)
            return nil
        } catch ScenarioError.unknownKey(let key, let path) {
            return (key, path)
        } catch {
            return nil
        }
    }

    @Test func aTypoAtTheTopLevelIsNamed() {
        let found = unknownKey(in: #"{"profil": "5.87", "peripherals": []}"#)
        #expect(found?.key == "profil")
        #expect(found?.path == "the top level")
    }

    @Test func aTypoInTimingIsNamedWithItsPath() {
        let found = unknownKey(in: #"{"timing": {"connectDelayMS": 5}, "peripherals": []}"#)
        #expect(found?.key == "connectDelayMS")
        #expect(found?.path == "timing")
    }

    @Test func aTypoDeepInTheDatabaseIsNamedWithItsPath() {
        let json = #"""
            {"peripherals": [
              {"address": "11:22:33:44:55:66"},
              {"address": "11:22:33:44:55:67", "services": [
                {"uuid": "180D", "characteristics": [
                  {"uuid": "2A38", "flags": ["read"]},
                  {"uuid": "2A37", "flags": ["notify"], "descriptors": [{"uuid": "2901", "writeable": true}]}
                ]}
              ]}
            ]}
            """#
        let found = unknownKey(in: json)
        #expect(found?.key == "writeable")
        #expect(found?.path == "peripherals[1].services[0].characteristics[1].descriptors[0]")
    }

    @Test func typosInPeripheralsServicesCharacteristicsAndValuesAreAllCaught() {
        let cases: [(String, String)] = [
            (#"{"address": "11:22:33:44:55:66", "rssiJiter": 2}"#, "rssiJiter"),
            (#"{"address": "11:22:33:44:55:66", "services": [{"uuid": "180F", "primery": false}]}"#, "primery"),
            (
                #"{"address": "11:22:33:44:55:66", "services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "flags": [], "notifyInterval": 5}]}]}"#,
                "notifyInterval"
            ),
            (
                #"{"address": "11:22:33:44:55:66", "services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "flags": [], "value": {"utf-8": "x"}}]}]}"#,
                "utf-8"
            ),
            (#"{"address": "11:22:33:44:55:66", "pairing": {"ioCapabilty": "DisplayOnly"}}"#, "ioCapabilty"),
            (#"{"address": "11:22:33:44:55:66", "pairing": {"requestSecurity": "encrypted"}}"#, "requestSecurity"),
            (#"{"address": "11:22:33:44:55:66", "standardServices": {"devicename": "x"}}"#, "devicename"),
        ]
        for (peripheral, key) in cases {
            #expect(unknownKey(in: #"{"peripherals": [\#(peripheral)]}"#)?.key == key, "\(peripheral)")
        }
    }

    @Test func theErrorSaysWhatAndWhere() {
        let error = ScenarioError.unknownKey("rssiJiter", path: "peripherals[0]")
        #expect(error.description.contains("\"rssiJiter\""))
        #expect(error.description.contains("peripherals[0]"))
    }

    @Test func everyDocumentedKeyIsStillAccepted() throws {
        let json = #"""
            {"profile": "5.66", "adapters": ["00:AA:BB:CC:DD:EE"],
             "timing": {"connectDelayMs": 1, "resolveDelayMs": 1, "disconnectDelayMs": 1, "connectTimeoutMs": 200,
                        "temporaryTimeoutMs": 1000, "scanTickMs": 10,
                        "indicationConfirmMs": 30, "pairingDelayMs": 5},
             "peripherals": [{"address": "11:22:33:44:55:66", "addressType": "random", "name": "n",
               "advertisingIntervalMs": 50, "rssi": -40, "rssiJitter": 1, "txPower": 0, "connectable": true,
               "discoverable": true, "serviceUUIDs": ["180F"], "manufacturerData": {"76": "01"},
               "serviceData": {"180F": "64"}, "appearance": 768, "advertising": true, "mtu": 100,
               "standardServices": {"deviceName": "gatt name", "appearance": 832},
               "pairing": {"ioCapability": "DisplayYesNo", "passkey": 1, "requiresAuthentication": true, "rejects": false,
                           "requestsSecurity": "authenticated"},
               "services": [{"uuid": "180F", "primary": true, "includes": [], "characteristics": [
                 {"uuid": "2A19", "flags": ["read", "notify"], "value": {"utf8": "d"}, "notifyIntervalMs": 10,
                  "notifyValues": ["01"], "readError": 2, "writeError": 3,
                  "descriptors": [{"uuid": "2901", "value": "00", "writable": true}]}]}]}]}
            """#
        let scenario = try decode(json)
        #expect(scenario.peripherals.first?.services.first?.characteristics.first?.readError == 2)
        #expect(scenario.timing?.scanTickMs == 10)
        #expect(scenario.simulatorOptions.indicationConfirmDelay == .milliseconds(30))
        #expect(scenario.simulatorOptions.pairingDelay == .milliseconds(5))
        #expect(scenario.peripherals.first?.pairing.ioCapability == .displayYesNo)
        #expect(
            scenario.peripherals.first?.standardServices == StandardServices(deviceName: "gatt name", appearance: 832))
        #expect(scenario.peripherals.first?.pairing.requestsSecurity == .authenticated)
    }

    @Test func aSecurityLevelOtherThanEncryptedOrAuthenticatedIsRefused() {
        #expect(throws: DecodingError.self) {
            try decode(#"{"peripherals": [{"address": "11:22:33:44:55:66", "pairing": {"requestsSecurity": "high"}}]}"#)
        }
        #expect(unknownKey(in: #"{"peripherals": [{"address": "11:22:33:44:55:66", "pairing": {}}]}"#) == nil)
    }
}
