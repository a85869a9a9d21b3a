import Testing

@testable import DBus

/// `Dictionary(room:)`: an empty dictionary with the room asked for, as
/// `Dictionary(minimumCapacity:)` makes one.
@Suite struct DictionaryRoomTests {
    @Test("it is empty and holds the asked number of entries without growing", arguments: [1, 3, 12, 64])
    func room(_ count: Int) {
        var dictionary = [String: Int](room: count)
        #expect(dictionary.isEmpty)
        #expect(dictionary.capacity >= count)
        #expect(dictionary.capacity == [String: Int](minimumCapacity: count).capacity)
        let capacity = dictionary.capacity
        for index in 0..<count { dictionary["key\(index)"] = index }
        #expect(dictionary.capacity == capacity)
        #expect(dictionary.count == count)
        #expect(dictionary["key\(count - 1)"] == count - 1)
    }

    @Test("no room is the empty dictionary, which grows as usual")
    func noRoom() {
        var dictionary = [Int: String](room: 0)
        #expect(dictionary.isEmpty)
        #expect(dictionary.capacity == 0)
        dictionary[1] = "one"
        #expect(dictionary == [1: "one"])
    }
}
