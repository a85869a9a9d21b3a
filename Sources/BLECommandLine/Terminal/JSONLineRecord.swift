import Foundation

/// A record the tool prints as one compact JSON line (`--json`), keys sorted.
protocol JSONLineRecord: Encodable {}

extension JSONLineRecord {
    /// The compact JSON line.
    var line: String {
        guard let data = try? jsonLineEncoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Shared by every `--json` record: encoders are not cheap to make per line.
private let jsonLineEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
}()
