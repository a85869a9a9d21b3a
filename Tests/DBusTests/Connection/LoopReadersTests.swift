import Testing

@testable import DBus

/// The I/O loop's table of readers, indexed by descriptor number, with no bus: a look-up finds
/// the reader set last for its descriptor and nothing for any other number, and the
/// descriptors the readiness set watches are exactly the ones read.
@Suite struct LoopReadersTests {
    /// A reader that tells which one it is when called with `events`.
    static func reader(_ name: String, into calls: Calls) -> LoopReader {
        .events { events in calls.record("\(name) \(events)") }
    }

    final class Calls: Sendable {
        private let calls = PosixMutex<[String]>([])
        var seen: [String] { calls.withLock { $0 } }
        func record(_ call: String) { calls.withLock { $0.append(call) } }
    }

    static func call(_ reader: LoopReader?, _ events: Int16) {
        guard case .events(let onReadable) = reader else { return }
        onReadable(events)
    }

    @Test("each descriptor finds its own reader; numbers never set, past the table or negative find none")
    func lookUp() {
        let calls = Calls()
        var readers = LoopReaders()
        readers.set(Self.reader("nine", into: calls), for: 9)
        readers.set(Self.reader("three", into: calls), for: 3)
        Self.call(readers[9], 1)
        Self.call(readers[3], 4)
        #expect(calls.seen == ["nine 1", "three 4"])
        for missing: Int32 in [0, 4, 8, 10, 1_000, -1] { #expect(readers[missing] == nil) }
        #expect(readers.descriptors == [9, 3])
    }

    @Test("setting a descriptor again replaces its reader and watches it once")
    func replace() {
        let calls = Calls()
        var readers = LoopReaders()
        readers.set(Self.reader("old", into: calls), for: 5)
        readers.set(Self.reader("new", into: calls), for: 5)
        Self.call(readers[5], 1)
        #expect(calls.seen == ["new 1"])
        #expect(readers.descriptors == [5])
    }

    @Test("a removed descriptor is neither found nor watched; removing it again says it was not read")
    func remove() {
        let calls = Calls()
        var readers = LoopReaders()
        readers.set(Self.reader("a", into: calls), for: 4)
        readers.set(Self.reader("b", into: calls), for: 7)
        let removals = [readers.remove(4), readers.remove(4), readers.remove(99), readers.remove(-3)]
        #expect(removals == [true, false, false, false])
        #expect(readers[4] == nil)
        #expect(readers.descriptors == [7])
        // Its number, reused by a new socket, takes a new reader.
        readers.set(Self.reader("c", into: calls), for: 4)
        Self.call(readers[4], 1)
        Self.call(readers[7], 1)
        #expect(calls.seen == ["c 1", "b 1"])
        #expect(readers.descriptors == [7, 4])
    }

    @Test("a negative descriptor (one closed already) is left out: nothing is watched or found")
    func closedDescriptor() {
        let calls = Calls()
        var readers = LoopReaders()
        readers.set(Self.reader("closed", into: calls), for: -1)
        #expect(readers[-1] == nil)
        #expect(readers.descriptors.isEmpty)
        let removed = readers.remove(-1)
        #expect(!removed)
    }
}
