import Foundation
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM cancel the running command's task, so it can unsubscribe,
/// disconnect and print its summary on the way out; a second Ctrl-C exits at once.
public enum Interruption {
    private static let requested = Atomic<Bool>(false)

    /// Whether Ctrl-C or SIGTERM arrived.
    static var wasRequested: Bool { requested.load(ordering: .acquiring) }

    /// Runs `body` in a task that the signals cancel, and returns its exit status.
    public static func run(_ body: @escaping @Sendable () async -> Int32) async -> Int32 {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let task = Task { await body() }
        let queue = DispatchQueue(label: "ble.signals")
        let sources = [SIGINT, SIGTERM].map { (number: Int32) -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if requested.exchange(true, ordering: .acquiringAndReleasing) { exit(ExitCode.interrupted) }
                task.cancel()
            }
            source.resume()
            return source
        }
        let status = await task.value
        for source in sources { source.cancel() }
        return status
    }

    /// Suspends until Ctrl-C or SIGTERM (that is, until the task is cancelled).
    static func wait() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
    }
}
