import Foundation
import Testing

extension AgainstBluetoothd {
    /// Trace parity: the D-Bus conversation of one scenario (objects, property types, signal
    /// order, error names) on BLESimulator's 5.66 profile against the real bluetoothd 5.66's,
    /// checked in as Traces/bluez-5.66.trace. Each difference is fixed in the simulator or
    /// listed with its reason in Traces/tolerances.txt. On the real daemon (`make
    /// test-bluez`) the test records afresh and compares with the checked-in trace, so that it
    /// stays current; the new recording is written for review (see ``TraceFiles``).
    @Suite("Trace parity")
    struct TraceParityTests {
        @Test("the conversation matches the real bluetoothd's trace up to the listed tolerances")
        func conversationMatchesRealTrace() async throws {
            let tolerances = try TraceTolerances(
                parsing: try String(contentsOf: TraceFiles.tolerances, encoding: .utf8))
            var trace: [String] = []
            try await Stage.run { stage in trace = try await TraceScenario.record(stage) }
            let written = try TraceFiles.write(trace, backend: Backend.current)
            guard let real = TraceFiles.checkedIn() else {
                Issue.record("no \(TraceFiles.realTrace.path): record it with make test-bluez and copy \(written.path)")
                return
            }
            let strict = Backend.current == .bluez
            let comparison = TraceComparison(
                reference: real, other: trace, tolerances: tolerances, strict: strict,
                variants: try TraceFiles.variants().map(\.lines))
            let other = strict ? "this run of the real daemon (\(written.path))" : "the simulator (\(written.path))"
            guard !comparison.agrees else { return }
            // The SDK's second Connect is its answer to bluetoothd's intermittent connect stall
            // (README, "The real BlueZ"): such a run cannot match, and says so first.
            let stalled = trace.filter { $0.hasPrefix("call Device1.Connect ") }.count > 1
            let note = stalled ? "this run hit the connect stall (a second Connect); run it again\n" : ""
            Issue.record("\(note)\(comparison.report(reference: "the checked-in real trace", other: other))")
        }
    }
}

/// Where the traces live: the checked-in real one, its kept variants and the tolerance list
/// next to these tests (found through the source path, which the test guest shares with the
/// host), fresh recordings under `.build/trace-parity/` (or `SWIFT_BLE_TRACE_OUT`).
enum TraceFiles {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Traces")
    static let realTrace = directory.appendingPathComponent("bluez-5.66.trace")
    static let tolerances = directory.appendingPathComponent("tolerances.txt")
    /// Other recordings of the real daemon, each showing a variation `realTrace` lacks.
    static let variantsDirectory = directory.appendingPathComponent("variants")

    /// The checked-in real trace, if there is one.
    static func checkedIn() -> [String]? {
        (try? String(contentsOf: realTrace, encoding: .utf8)).map(lines)
    }

    /// The kept variants of the real trace, by file name.
    static func variants() throws -> [(name: String, lines: [String])] {
        try FileManager.default.contentsOfDirectory(atPath: variantsDirectory.path)
            .filter { $0.hasSuffix(".trace") }.sorted()
            .map { name in
                (name, lines(try String(contentsOf: variantsDirectory.appendingPathComponent(name), encoding: .utf8)))
            }
    }

    /// A trace file's lines without its comments.
    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }
    }

    /// Writes a fresh recording for review and returns where.
    static func write(_ trace: [String], backend: Backend) throws -> URL {
        let root = directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let fallback = root.appendingPathComponent(".build/trace-parity/\(backend)-5.66.trace").path
        let url = URL(fileURLWithPath: ProcessInfo.processInfo.environment["SWIFT_BLE_TRACE_OUT"] ?? fallback)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try (trace.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url
    }
}
