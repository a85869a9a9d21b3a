import Foundation

// The libFuzzer entry points, built by build.sh with `swiftc -sanitize=fuzzer,address`
// together with Tests/BLETests/Fuzz (the harness the regression test also runs).

/// Runs one input through ``FuzzHarness``.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    FuzzHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// With `FUZZ_WRITE_CORPUS=<dir>`, writes the seed corpus there and exits.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>?,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
    guard let directory = ProcessInfo.processInfo.environment["FUZZ_WRITE_CORPUS"] else { return 0 }
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, bytes) in try FuzzSeeds.all() {
            try Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
        }
        exit(0)
    } catch {
        print("cannot write the corpus: \(error)")
        exit(1)
    }
}
