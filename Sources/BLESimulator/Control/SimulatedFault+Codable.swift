import Foundation

/// The JSON form of a fault, used by `InjectFault` on the control interface:
///
/// ```json
/// {"operation": "connect", "address": "C4:7C:8D:6A:11:22", "count": 1,
///  "action": {"fail": {"name": "org.bluez.Error.Failed", "message": "le-connection-abort-by-local"}}}
/// ```
///
/// `operation` is one of ``SimulatedFault/Operation``'s raw values; `address` and
/// `characteristic` narrow it (any when absent); `count` is how many matching operations it
/// affects: 1 when absent, every one when `null`. `action` holds exactly one of
/// `{"fail": {"name": …, "message": …}}`, `{"attError": {"code": 14}}`, `{"delayMs": 500}`,
/// `"noReply"` and `"dropLink"` (the last two also as `{"noReply": {}}`, `{"dropLink": {}}`).
extension SimulatedFault: Codable {
    private enum CodingKeys: String, CodingKey { case operation, address, characteristic, action, count }

    /// Decodes the JSON form above.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let operation = try c.decode(Operation.self, forKey: .operation)
        let action = try c.decode(Action.self, forKey: .action)
        var count: Int? = 1
        if c.contains(.count) {
            count = try c.decodeNil(forKey: .count) ? nil : try c.decode(Int.self, forKey: .count)
        }
        if let count, count < 1 {
            throw DecodingError.dataCorruptedError(
                forKey: .count, in: c, debugDescription: "count must be at least 1 (null for every operation)")
        }
        self.init(
            operation, address: try c.decodeIfPresent(String.self, forKey: .address),
            characteristic: try c.decodeIfPresent(String.self, forKey: .characteristic), action: action,
            count: count)
    }

    /// Encodes the JSON form above (`count` always present, `null` for every operation).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(operation, forKey: .operation)
        try c.encodeIfPresent(address, forKey: .address)
        try c.encodeIfPresent(characteristic, forKey: .characteristic)
        try c.encode(action, forKey: .action)
        if let count { try c.encode(count, forKey: .count) } else { try c.encodeNil(forKey: .count) }
    }
}

/// One key naming the action kind, `{"kind": payload}`, or a bare kind string for the actions
/// without a payload.
extension SimulatedFault.Action: Codable {
    private enum Kind: String, CodingKey, CaseIterable { case fail, attError, delayMs, noReply, dropLink }
    private enum FailKeys: String, CodingKey { case name, message }
    private enum ATTKeys: String, CodingKey { case code }

    /// Decodes one of the action forms documented on ``SimulatedFault``.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            switch Kind(rawValue: text) {
            case .noReply?: self = .noReply
            case .dropLink?: self = .dropLink
            default:
                throw DecodingError.dataCorruptedError(
                    in: single, debugDescription: "\"\(text)\" is not an action without arguments (noReply, dropLink)")
            }
            return
        }
        let c = try decoder.container(keyedBy: Kind.self)
        guard c.allKeys.count == 1, let kind = c.allKeys.first else {
            let names = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: c.codingPath, debugDescription: "an action has exactly one of the keys \(names)"))
        }
        switch kind {
        case .fail:
            let fail = try c.nestedContainer(keyedBy: FailKeys.self, forKey: .fail)
            self = .fail(
                name: try fail.decode(String.self, forKey: .name),
                message: try fail.decode(String.self, forKey: .message))
        case .attError:
            let att = try c.nestedContainer(keyedBy: ATTKeys.self, forKey: .attError)
            self = .attError(try att.decode(UInt8.self, forKey: .code))
        case .delayMs:
            let milliseconds = try c.decode(Int.self, forKey: .delayMs)
            guard milliseconds >= 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .delayMs, in: c, debugDescription: "delayMs must not be negative")
            }
            self = .delay(.milliseconds(milliseconds))
        case .noReply: self = .noReply
        case .dropLink: self = .dropLink
        }
    }

    /// Encodes the shortest of the forms documented on ``SimulatedFault``.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .noReply:
            var single = encoder.singleValueContainer()
            try single.encode(Kind.noReply.rawValue)
        case .dropLink:
            var single = encoder.singleValueContainer()
            try single.encode(Kind.dropLink.rawValue)
        case .fail(let name, let message):
            var c = encoder.container(keyedBy: Kind.self)
            var fail = c.nestedContainer(keyedBy: FailKeys.self, forKey: .fail)
            try fail.encode(name, forKey: .name)
            try fail.encode(message, forKey: .message)
        case .attError(let code):
            var c = encoder.container(keyedBy: Kind.self)
            var att = c.nestedContainer(keyedBy: ATTKeys.self, forKey: .attError)
            try att.encode(code, forKey: .code)
        case .delay(let duration):
            var c = encoder.container(keyedBy: Kind.self)
            let (seconds, attoseconds) = duration.components
            try c.encode(seconds * 1000 + attoseconds / 1_000_000_000_000_000, forKey: .delayMs)
        }
    }
}
