import Foundation
import Synchronization
import Testing

@testable import DBus

/// The I/O thread as the executor of actors: code the loop calls back (a wake-up here, a reply
/// or signal in the BLE layer) runs on that thread between jobs, so it may enter an actor of
/// the executor synchronously (`assumeIsolated`), and only there.
@Suite struct ExecutorIsolationTests {
    /// An actor that runs where the connection does its I/O, as the BLE layer's actors do.
    actor Counter {
        let executor: ConnectionExecutor
        private(set) var count = 0

        init(executor: ConnectionExecutor) { self.executor = executor }

        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        func increment() { count += 1 }
    }

    @Test("the executor knows its thread: tasks preferring it run there, others do not")
    func knowsItsThread() async throws {
        try await withConnections(1) { _, connections in
            let executor = connections[0].executor
            #expect(!executor.isCurrent)
            let inside = await withTaskExecutorPreference(executor) { executor.isCurrent }
            #expect(inside)
            let detached = await Task.detached { executor.isCurrent }.value
            #expect(!detached)
        }
    }

    @Test("the I/O thread carries its own name, which tools such as top -H and perf show")
    func ioThreadIsNamed() async throws {
        try await withConnections(1) { _, connections in
            let executor = connections[0].executor
            let name = await withTaskExecutorPreference(executor) { executor.isCurrent ? Self.kernelThreadName() : nil }
            #expect(name == "dbus-io")
            #expect(Self.kernelThreadName() != "dbus-io")
        }
    }

    /// The calling thread's name as the kernel has it (`/proc/thread-self/comm`).
    private static func kernelThreadName() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return nil }
        return text.trimmingCharacters(in: .newlines)
    }

    @Test("a loop callback enters an actor of the executor at once, with no task")
    func callbackEntersTheActor() async throws {
        try await withConnections(1) { _, connections in
            let connection = connections[0]
            let counter = Counter(executor: connection.executor)
            let entered = Atomic<Int>(0)
            connection.schedule(after: .zero) {
                guard connection.executor.isCurrent else { return }
                counter.assumeIsolated { $0.increment() }
                entered.add(1, ordering: .relaxed)
            }
            let ran = try await eventually { entered.load(ordering: .relaxed) == 1 }
            #expect(ran)
            #expect(await counter.count == 1)
        }
    }
}
