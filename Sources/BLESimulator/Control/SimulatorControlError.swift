import DBus

/// The errors of the simulator's control API, by D-Bus error name.
///
/// The Swift methods added for the control interface throw ``DBus/DBusError`` values whose
/// ``DBus/DBusError/name`` is one of these, and the D-Bus interface answers with the same name
/// and message, so a test reads the same failure whichever way it drives the simulator.
public enum SimulatorControlError {
    /// `org.swiftble.Simulator.Error.InvalidJSON`: a JSON argument does not parse or does not
    /// fit the schema (the message says where).
    public static let invalidJSON = "org.swiftble.Simulator.Error.InvalidJSON"
    /// `org.swiftble.Simulator.Error.InvalidArguments`: a malformed address, an out-of-range
    /// size, a peripheral the simulator cannot serve (bad UUID), a mismatched address.
    public static let invalidArguments = "org.swiftble.Simulator.Error.InvalidArguments"
    /// `org.swiftble.Simulator.Error.UnknownPeripheral`: no peripheral has that address.
    public static let unknownPeripheral = "org.swiftble.Simulator.Error.UnknownPeripheral"
    /// `org.swiftble.Simulator.Error.UnknownCharacteristic`: the peripheral has no such
    /// characteristic.
    public static let unknownCharacteristic = "org.swiftble.Simulator.Error.UnknownCharacteristic"
    /// `org.swiftble.Simulator.Error.UnknownAdapter`: no adapter has that index.
    public static let unknownAdapter = "org.swiftble.Simulator.Error.UnknownAdapter"
    /// `org.swiftble.Simulator.Error.Failed`: anything else (a restart that failed, a simulator
    /// that has been stopped).
    public static let failed = "org.swiftble.Simulator.Error.Failed"

    /// An error carrying one of the names above, thrown by the Swift API.
    static func make(_ name: String, _ message: String) -> DBusError {
        DBusError(.invalidValue, name: name, message: message)
    }

    /// The error reply the control interface sends for `error`: our own names and bus error
    /// replies keep their name; anything else becomes ``failed``.
    static func reply(for error: any Error) -> DBusError {
        guard let error = error as? DBusError else { return DBusError.reply(failed, "\(error)") }
        if error.code == .remote { return error }
        return DBusError.reply(error.name ?? failed, error.message)
    }
}
