import BLE
import Foundation

/// A spinner on standard error while something waits (connecting, discovering), erased when it
/// is done. Only on a terminal: redirected output stays free of control characters.
enum Progress {
    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    /// Runs `body` with a spinner labelled `label` (e.g. `connecting to C4:7C:…`).
    static func run<T: Sendable>(
        _ label: String, enabled: Bool = Terminal.errorIsTerminal, _ body: () async throws(BLEError) -> T
    ) async throws(BLEError) -> T {
        guard enabled else { return try await body() }
        let spinner = Task {
            var frame = 0
            let started = ContinuousClock.now
            while !Task.isCancelled {
                let elapsed = (ContinuousClock.now - started).components.seconds
                let clock = elapsed > 0 ? " \(elapsed) s" : ""
                Terminal.write("\r\u{1B}[K\(frames[frame % frames.count]) \(label) …\(clock)", to: STDERR_FILENO)
                frame += 1
                try? await Task.sleep(for: .milliseconds(80))
            }
            Terminal.write("\r\u{1B}[K", to: STDERR_FILENO)
        }
        defer { spinner.cancel() }
        let result: Result<T, BLEError>
        do throws(BLEError) {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        spinner.cancel()
        await spinner.value
        return try result.get()
    }
}
