import Testing

@testable import DBus

/// The I/O loop's table of readers, indexed by descriptor number, with no bus: a look-up finds
/// the reader set last for its descriptor and nothing for any other number, and the
/// descriptors the readiness set watches are exactly the ones read.
@Suite struct LoopReadersTests {
    /// A table whose readers, set in order, record their name and the events they are called with.
    static func table(_ readers: [(name: String, fd: Int32)], into log: EventLog<String>) -> LoopReaders {
        var table = LoopReaders()
        for (name, fd) in readers { table.set(.events { log.record("\(name) \($0)") }, for: fd) }
        return table
    }

    static func call(_ reader: LoopReader?, _ events: Int16) {
        guard case .events(let onReadable) = reader else { return }
        onReadable(events)
    }

    @Test("each descriptor finds its own reader; numbers never set, past the table or negative find none")
    func lookUp() {
        let log = EventLog<String>()
        let readers = Self.table([("nine", 9), ("three", 3)], into: log)
        Self.call(readers[9], 1)
        Self.call(readers[3], 4)
        #expect(log.all == ["nine 1", "three 4"])
        for missing: Int32 in [0, 4, 8, 10, 1_000, -1] { #expect(readers[missing] == nil) }
        #expect(readers.descriptors == [9, 3])
    }

    @Test("setting a descriptor again replaces its reader and watches it once")
    func replace() {
        let log = EventLog<String>()
        let readers = Self.table([("old", 5), ("new", 5)], into: log)
        Self.call(readers[5], 1)
        #expect(log.all == ["new 1"])
        #expect(readers.descriptors == [5])
    }

    @Test("a removed descriptor is neither found nor watched; removing it again says it was not read")
    func remove() {
        let log = EventLog<String>()
        var readers = Self.table([("a", 4), ("b", 7)], into: log)
        let removals = [readers.remove(4), readers.remove(4), readers.remove(99), readers.remove(-3)]
        #expect(removals == [true, false, false, false])
        #expect(readers[4] == nil)
        #expect(readers.descriptors == [7])
        // Its number, reused by a new socket, takes a new reader.
        readers.set(.events { log.record("c \($0)") }, for: 4)
        Self.call(readers[4], 1)
        Self.call(readers[7], 1)
        #expect(log.all == ["c 1", "b 1"])
        #expect(readers.descriptors == [7, 4])
    }

    @Test("a negative descriptor (one closed already) is left out: nothing is watched or found")
    func closedDescriptor() {
        var readers = Self.table([("closed", -1)], into: EventLog<String>())
        #expect(readers[-1] == nil)
        #expect(readers.descriptors.isEmpty)
        let removed = readers.remove(-1)
        #expect(!removed)
    }
}
