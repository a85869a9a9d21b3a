import BLESimulator
import Foundation
import Testing

/// The JSON form of ``SimulatedFault`` (what `InjectFault` takes).
@Suite struct SimulatedFaultCodingTests {
    private func decode(_ json: String) throws -> SimulatedFault {
        try JSONDecoder().decode(SimulatedFault.self, from: Data(json.utf8))
    }

    @Test(arguments: [
        (
            #"{"fail": {"name": "org.bluez.Error.Failed", "message": "boom"}}"#,
            SimulatedFault.Action.fail(name: "org.bluez.Error.Failed", message: "boom")
        ),
        (#"{"attError": {"code": 14}}"#, .attError(14)),
        (#"{"delayMs": 250}"#, .delay(.milliseconds(250))),
        (#""noReply""#, .noReply),
        (#"{"noReply": {}}"#, .noReply),
        (#""dropLink""#, .dropLink),
        (#"{"dropLink": true}"#, .dropLink),
    ])
    func actionForms(json: String, expected: SimulatedFault.Action) throws {
        let fault = try decode(#"{"operation": "read", "action": \#(json)}"#)
        #expect(fault.action == expected)
    }

    @Test func countDefaultsToOneAndNullMeansEvery() throws {
        #expect(try decode(#"{"operation": "connect", "action": "noReply"}"#).count == 1)
        #expect(try decode(#"{"operation": "connect", "action": "noReply", "count": 3}"#).count == 3)
        #expect(try decode(#"{"operation": "connect", "action": "noReply", "count": null}"#).count == nil)
        #expect(throws: DecodingError.self) {
            try decode(#"{"operation": "connect", "action": "noReply", "count": 0}"#)
        }
    }

    @Test func filtersAreKept() throws {
        let fault = try decode(
            #"{"operation": "write", "address": "C4:7C:8D:6A:11:22", "characteristic": "2A39", "action": "dropLink"}"#)
        #expect(
            fault == SimulatedFault(.write, address: "C4:7C:8D:6A:11:22", characteristic: "2A39", action: .dropLink))
    }

    @Test(arguments: [
        SimulatedFault(.connect, action: .fail(name: "org.bluez.Error.Failed", message: "x")),
        SimulatedFault(.read, address: "C4:7C:8D:6A:11:22", characteristic: "2A37", action: .attError(2), count: nil),
        SimulatedFault(.write, action: .delay(.milliseconds(1_500)), count: 4),
        SimulatedFault(.startNotify, action: .noReply),
        SimulatedFault(.acquire, action: .dropLink),
    ])
    func roundTrips(fault: SimulatedFault) throws {
        let json = try JSONEncoder().encode(fault)
        #expect(try JSONDecoder().decode(SimulatedFault.self, from: json) == fault)
    }

    @Test(arguments: [
        #"{"operation": "teleport", "action": "noReply"}"#,
        #"{"operation": "read"}"#,
        #"{"operation": "read", "action": "explode"}"#,
        #"{"operation": "read", "action": {"noReply": {}, "dropLink": {}}}"#,
        #"{"operation": "read", "action": {"attError": {"code": 300}}}"#,
        #"{"operation": "read", "action": {"delayMs": -5}}"#,
        #"{"operation": "read", "action": {"fail": {"name": "x"}}}"#,
    ])
    func rejectsJSONOutsideTheSchema(json: String) {
        #expect(throws: DecodingError.self) { try decode(json) }
    }
}
