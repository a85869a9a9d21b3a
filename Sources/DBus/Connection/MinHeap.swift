/// A binary min-heap of key–value pairs; used for deadlines on the I/O thread.
struct MinHeap<Key: Comparable, Value> {
    private var storage: [(key: Key, value: Value)] = []

    var min: (key: Key, value: Value)? { storage.first }
    var count: Int { storage.count }

    mutating func insert(_ key: Key, _ value: Value) {
        storage.append((key, value))
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child].key < storage[parent].key else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Empties the heap, keeping its storage for the next entries.
    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
    }

    mutating func removeMin() {
        guard !storage.isEmpty else { return }
        storage.swapAt(0, storage.count - 1)
        storage.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < storage.count && storage[left].key < storage[smallest].key { smallest = left }
            if right < storage.count && storage[right].key < storage[smallest].key { smallest = right }
            if smallest == parent { return }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
