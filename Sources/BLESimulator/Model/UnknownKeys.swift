/// Any JSON object key, to list the keys an object really has.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) { self.stringValue = stringValue }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Decoder {
    /// Throws ``ScenarioError/unknownKey(_:path:)`` for the first key of this object that
    /// `Keys` does not know: a misspelt key must not silently keep its default.
    func rejectUnknownKeys<Keys: CodingKey>(_ known: Keys.Type) throws {
        let container = try container(keyedBy: AnyCodingKey.self)
        let unknown = container.allKeys.map(\.stringValue).filter { Keys(stringValue: $0) == nil }
        guard let first = unknown.min() else { return }
        throw ScenarioError.unknownKey(first, path: ScenarioError.describe(codingPath))
    }
}

extension ScenarioError {
    /// `peripherals[0].services[1]`: the JSON path of a decoding position.
    static func describe(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "the top level" : text
    }
}
