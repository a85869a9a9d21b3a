import BlueZ
import DBus
import Foundation
import Testing

/// Replays the fuzz corpus and every input that once crashed (Tests/Fuzz/regressions)
/// through the fuzz harness: a crash there fails the whole run, as it should.
@Suite("Fuzz corpus and regressions")
struct FuzzCorpusTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ folder: String) throws -> [(String, [UInt8])] {
        let directory = fuzzDirectory.appendingPathComponent(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        return try names.sorted().map { ($0, Array(try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    @Test("the seeds are what bluetoothd sends: they decode to a tree with a device")
    func seedsAreMeaningful() throws {
        let seeds = try FuzzSeeds.all()
        let wire = try #require(seeds["wire-managed-objects"])
        let message = try DBusMessage(wireFormat: Array(wire.dropFirst()))
        var tree = BlueZObjectTree()
        _ = tree.apply(try ObjectTreeEvent(managedObjectsReply: message))
        let device = try #require(try tree.device(at: try ObjectPath(FuzzSeeds.device.rawValue)))
        #expect(device.rssi == -60)
        #expect(try tree.characteristic(at: FuzzSeeds.characteristic)?.unknownFlags == ["x-unknown-flag"])
        for (_, bytes) in seeds { FuzzHarness.run(bytes) }
    }

    @Test("the corpus holds the seeds; it and the inputs that once crashed replay without a crash")
    func corpusAndRegressions() throws {
        let corpus = try Self.inputs("corpus")
        #expect(Set(corpus.map(\.0)).isSuperset(of: try FuzzSeeds.all().keys))
        for (_, bytes) in corpus + (try Self.inputs("regressions")) { FuzzHarness.run(bytes) }
    }
}
