import Foundation
import Testing

/// The soak's own checks, on values made up here: they must catch what they are for.
@Suite("Fault soak checks")
struct SoakCheckTests {
    @Test("a payload decodes as sent; cut, altered or re-addressed it does not")
    func payloads() {
        let payload = SoakPayload(.indication, peripheral: 300, sequence: 123_456)
        #expect(SoakPayload(payload.data) == payload)
        #expect(SoakPayload(payload.data.prefix(15)) == nil)
        var altered = payload.data
        altered[12] ^= 0x01
        #expect(SoakPayload(altered) == nil)
        var readdressed = payload.data
        readdressed[2] ^= 0x01
        #expect(SoakPayload(readdressed) == nil, "the pattern depends on the peripheral")
    }

    @Test("a subscription that misses, repeats, reorders or invents a value is reported")
    func watches() {
        let key = SoakStreams.Key(peripheral: 1, kind: .notification)
        let streams = SoakStreams()
        let log: [UInt32] = [1, 2, 3, 4]
        streams.record(log, for: key)
        let good = SoakWatch(key, start: 1)
        for sequence in [1, 2, 3, 4] as [UInt32] {
            good.receive(SoakPayload(.notification, peripheral: 1, sequence: sequence).data)
        }
        #expect(good.problems(until: 4, streams).isEmpty, "a value before the mark may arrive too")
        let bad = SoakWatch(key, start: 0)
        for sequence in [2, 2, 4, 3, 9] as [UInt32] {
            bad.receive(SoakPayload(.notification, peripheral: 1, sequence: sequence).data)
        }
        bad.receive(Data([1, 2, 3]))
        let problems = bad.problems(until: 4, streams).joined(separator: "\n")
        #expect(problems.contains("damaged"))
        #expect(problems.contains("received #9, which the simulator never delivered"))
        #expect(problems.contains("out of order or twice"))
        #expect(problems.contains("never received: [1]"))
        #expect(SoakWatch(key, start: 0).problems(until: nil, streams).isEmpty, "ended by the SDK before any value")
    }
}
