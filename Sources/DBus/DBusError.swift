/// The one error type of the `DBus` module.
///
/// Errors that came over the bus keep the sender's D-Bus error name and message
/// (``name`` and ``message``); errors raised locally (a timeout, a cancelled task, an
/// invalid value) carry a ``Code`` and, where libdbus or the D-Bus specification gives one,
/// the matching standard error name too.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable classification of a ``DBusError``; new codes may be added over time.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case remote, timeout, cancelled, disconnected, connectionFailed
            case invalidName, invalidValue, typeMismatch, limitExceeded, nameNotOwned, io
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The peer answered with an error reply; ``DBusError/name`` holds its name.
        public static let remote = Code(.remote)
        /// No reply arrived before the deadline.
        public static let timeout = Code(.timeout)
        /// The task waiting for the operation was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The connection to the bus is closed or was lost.
        public static let disconnected = Code(.disconnected)
        /// The bus could not be reached or refused the connection.
        public static let connectionFailed = Code(.connectionFailed)
        /// A string does not follow the D-Bus rules for the name it was meant to be.
        public static let invalidName = Code(.invalidName)
        /// A value cannot be sent: wrong element types, a string with NUL, a bad signature.
        public static let invalidValue = Code(.invalidValue)
        /// A received value has another type than the one expected.
        public static let typeMismatch = Code(.typeMismatch)
        /// A limit of the bus or of this library was reached.
        public static let limitExceeded = Code(.limitExceeded)
        /// A well-known name could not be obtained or is not owned by this connection.
        public static let nameNotOwned = Code(.nameNotOwned)
        /// The operating system reported an error on a file descriptor.
        public static let io = Code(.io)

        /// A short, human-readable form.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// The D-Bus error name, e.g. `org.freedesktop.DBus.Error.UnknownMethod`, when there is one.
    public var name: String?
    /// A human-readable explanation: the error reply's message for remote errors.
    public var message: String

    /// Creates an error from its parts.
    public init(_ code: Code, name: String? = nil, message: String) {
        self.code = code
        self.name = name
        self.message = message
    }

    /// A short, human-readable form.
    public var description: String {
        if let name { return "\(name): \(message)" }
        return "\(code): \(message)"
    }
}

extension DBusError {
    /// Standard error names from the D-Bus specification, for replies a handler sends.
    public enum StandardName {
        /// `org.freedesktop.DBus.Error.Failed`
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        /// `org.freedesktop.DBus.Error.NoReply`
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        /// `org.freedesktop.DBus.Error.Timeout`
        public static let timeout = "org.freedesktop.DBus.Error.Timeout"
        /// `org.freedesktop.DBus.Error.Disconnected`
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        /// `org.freedesktop.DBus.Error.InvalidArgs`
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        /// `org.freedesktop.DBus.Error.UnknownMethod`
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        /// `org.freedesktop.DBus.Error.UnknownObject`
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        /// `org.freedesktop.DBus.Error.UnknownInterface`
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        /// `org.freedesktop.DBus.Error.UnknownProperty`
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        /// `org.freedesktop.DBus.Error.PropertyReadOnly`
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        /// `org.freedesktop.DBus.Error.ServiceUnknown`
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        /// `org.freedesktop.DBus.Error.NameHasNoOwner`
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        /// `org.freedesktop.DBus.Error.AccessDenied`
        public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        /// `org.freedesktop.DBus.Error.LimitsExceeded`
        public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
        /// `org.freedesktop.DBus.Error.NotSupported`
        public static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
    }

    /// An error reply to send from an exported method: `name` must be a valid error name.
    public static func reply(_ name: String, _ message: String) -> DBusError {
        DBusError(.remote, name: name, message: message)
    }
}
