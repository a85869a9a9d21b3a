import DBus
import Foundation

/// Decodes the JSON arguments of the control interface, turning a decoding failure into an
/// `InvalidJSON` error whose message says what is wrong and where (`services[0].uuid: …`),
/// since the caller is usually a person with `dbus-send`.
enum ControlJSON {
    static func decode<T: Decodable>(_ type: T.Type, from text: String, what: String) throws(DBusError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw SimulatorControlError.make(SimulatorControlError.invalidJSON, "\(what): \(describe(error))")
        } catch {
            throw SimulatorControlError.make(SimulatorControlError.invalidJSON, "\(what): \(error)")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            "\(location(context)): expected \(type)"
        case .valueNotFound(let type, let context):
            "\(location(context)): missing \(type) value"
        case .keyNotFound(let key, let context):
            "\(location(context)): missing key \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            "\(location(context)): \(context.debugDescription)"
                + (context.underlyingError.map { " (\($0))" } ?? "")
        @unknown default:
            "\(error)"
        }
    }

    /// `services[0].characteristics[2].uuid`, or `top level`.
    private static func location(_ context: DecodingError.Context) -> String {
        var out = ""
        for key in context.codingPath {
            if let index = key.intValue {
                out += "[\(index)]"
            } else {
                out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return out.isEmpty ? "top level" : out
    }
}
