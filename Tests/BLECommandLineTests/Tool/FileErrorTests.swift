import Foundation
import Testing

@testable import BLECommandLine

/// Files the tools cannot use: the file and the reason in words, never Foundation's internals.
@Suite struct FileErrorTests {
    /// A scratch directory with `files` (name → contents), removed afterwards.
    static func withFiles(_ files: [String: String], _ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ble-files-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, contents) in files {
            try Data(contents.utf8).write(to: directory.appendingPathComponent(name))
        }
        try await body(directory)
    }

    /// The first line `ble-sim --scenario path` prints on standard error, and its status.
    static func simError(_ path: String) async throws -> (line: String, status: Int32) {
        let outcome = try await ToolProcess.run(["sim", "--scenario", path])
        return (String(outcome.errors.split(separator: "\n").first ?? ""), outcome.status)
    }

    @Test func scenarioFilesThatCannotBeRead() async throws {
        try await Self.withFiles([:]) { directory in
            let missing = directory.appendingPathComponent("missing.json").path
            #expect(try await Self.simError(missing).line == "ble sim: error: cannot read \(missing): no such file")
            #expect(
                try await Self.simError(directory.path).line
                    == "ble sim: error: cannot read \(directory.path): it is a directory")
            let device = try await Self.simError("/dev/null")
            #expect(device.line == "ble sim: error: /dev/null: the file is empty", "not 'permission denied'")
            #expect(device.status == ExitCode.usage)
        }
    }

    @Test func scenarioFilesThatAreNotScenarios() async throws {
        let files = [
            "broken.json": "{", "list.json": "{\"peripherals\": 3}",
            "address.json": "{\"peripherals\": [{\"name\": \"x\"}]}",
        ]
        try await Self.withFiles(files) { directory in
            var lines: [String: String] = [:]
            for name in files.keys {
                lines[name] = try await Self.simError(directory.appendingPathComponent(name).path).line
                    .replacingOccurrences(of: directory.path + "/", with: "")
            }
            #expect(lines["broken.json"] == "ble sim: error: broken.json: not valid JSON")
            #expect(lines["list.json"] == "ble sim: error: list.json: peripherals should be a list")
            #expect(lines["address.json"] == "ble sim: error: address.json: peripherals[0].address is missing")
        }
    }

    @Test func specFilesThatCannotBeRead() async throws {
        try await Self.withFiles([:]) { directory in
            let missing = directory.appendingPathComponent("spec.json").path
            let outcome = try await ToolProcess.run(["serve", missing])
            #expect(outcome.status == ExitCode.usage)
            #expect(outcome.errors.hasPrefix("ble serve: error: cannot read \(missing): no such file\n"))
            #expect(!outcome.errors.contains("Domain="))
        }
    }
}
