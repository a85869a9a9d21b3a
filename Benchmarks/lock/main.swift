import Glibc
import Synchronization

// The cost of PosixMutex (Sources/DBus/Concurrency) against Synchronization.Mutex, uncontended:
// a lock and unlock pair, and an object that holds one made, locked once and released (as a
// CallSlot per D-Bus call). Built by `make bench-lock` with PosixMutex.swift, -O, whole module.
// Times are per operation, the best of 30 rounds, in the thread's CPU time so that other
// processes on a shared machine do not count.

final class WithMutex: Sendable { let lock = Mutex(0) }
final class WithPosixMutex: Sendable { let lock = PosixMutex(0) }

/// Keeps the objects made from being promoted to the stack, as a real one escapes.
nonisolated(unsafe) var escaped: AnyObject?

@inline(never) func lockMutex(_ object: WithMutex, _ count: Int) {
    for _ in 0..<count { object.lock.withLock { $0 &+= 1 } }
}

@inline(never) func lockPosixMutex(_ object: WithPosixMutex, _ count: Int) {
    for _ in 0..<count { object.lock.withLock { $0 &+= 1 } }
}

@inline(never) func makeMutexes(_ count: Int) {
    for _ in 0..<count {
        let object = WithMutex()
        escaped = object
        object.lock.withLock { $0 &+= 1 }
    }
}

@inline(never) func makePosixMutexes(_ count: Int) {
    for _ in 0..<count {
        let object = WithPosixMutex()
        escaped = object
        object.lock.withLock { $0 &+= 1 }
    }
}

func threadCPUNanoseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1e9 + Double(now.tv_nsec)
}

func measure(_ name: String, _ count: Int, _ body: (Int) -> Void) -> String {
    var best = Double.infinity
    for _ in 0..<30 {
        let start = threadCPUNanoseconds()
        body(count)
        best = min(best, threadCPUNanoseconds() - start)
    }
    let perOperation = (best / Double(count) * 10).rounded() / 10
    return "| \(name) | \(perOperation) |"
}

let mutexObject = WithMutex()
let posixObject = WithPosixMutex()
print("| uncontended, per operation | ns |")
print("| --- | --- |")
print(measure("Mutex: lock + unlock", 1_000_000) { lockMutex(mutexObject, $0) })
print(measure("PosixMutex: lock + unlock", 1_000_000) { lockPosixMutex(posixObject, $0) })
print(measure("object with a Mutex: make, lock once, release", 200_000, makeMutexes))
print(measure("object with a PosixMutex: make, lock once, release", 200_000, makePosixMutexes))
