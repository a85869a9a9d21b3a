import Foundation

extension DecodingError {
    /// What is wrong with a JSON document, in one line a person can act on: where (the key path)
    /// and what, without Swift's type names or debug descriptions.
    var plainDescription: String {
        switch self {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return context.underlyingError == nil && context.debugDescription.contains("JSON")
                ? "not valid JSON" : "not valid JSON (\(context.debugDescription.lowercased()))"
        case .dataCorrupted(let context):
            return "\(Self.place(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(Self.place(context.codingPath + [key])) is missing"
        case .valueNotFound(_, let context):
            return "\(Self.place(context.codingPath)) is missing (null)"
        case .typeMismatch(let type, let context):
            return "\(Self.place(context.codingPath)) should be \(Self.kind(of: type))"
        @unknown default:
            return "\(self)"
        }
    }

    private static func place(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return "the document" }
        return path.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            .trimmingPrefix(".").description
    }

    private static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int16.Type, is Int32.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type:
            "a whole number"
        case is Double.Type: "a number"
        default: String(describing: type).hasPrefix("Array") ? "a list" : "an object"
        }
    }
}
