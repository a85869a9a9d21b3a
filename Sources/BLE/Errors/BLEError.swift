/// The one error type of the public BLE API: every public async method throws it.
///
/// ``code`` is stable and meant for `switch`/`==`; ``dbusErrorName`` and ``message`` keep what
/// BlueZ or D-Bus said, for logs and for cases the codes do not cover. ``isTransient`` says
/// whether trying again later may succeed: retry policies use it instead of matching strings.
public struct BLEError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A stable classification; new codes may be added, so `switch` needs a `default`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// No answer before the deadline.
        public static let timeout = Code("timeout")
        /// The waiting task was cancelled, or BlueZ cancelled the operation (a pending connect
        /// by a disconnect, a pairing by `CancelPairing` or by its link dropping).
        public static let cancelled = Code("cancelled")
        /// The peripheral is not connected.
        public static let notConnected = Code("notConnected")
        /// The link dropped while the operation was outstanding.
        public static let disconnected = Code("disconnected")
        /// No such peripheral, service, characteristic or adapter (or it vanished).
        public static let notFound = Code("notFound")
        /// The peripheral refused: read or write not permitted, or pairing needed.
        public static let notPermitted = Code("notPermitted")
        /// The peripheral requires authorization.
        public static let notAuthorized = Code("notAuthorized")
        /// Another operation of the same kind is in progress.
        public static let inProgress = Code("inProgress")
        /// The operation is not supported by the peripheral, the adapter or BlueZ.
        public static let notSupported = Code("notSupported")
        /// Already done or already registered.
        public static let alreadyExists = Code("alreadyExists")
        /// Establishing the connection failed (e.g. `le-connection-abort-by-local`).
        public static let connectionFailed = Code("connectionFailed")
        /// The adapter is powered off.
        public static let poweredOff = Code("poweredOff")
        /// There is no Bluetooth adapter.
        public static let unsupported = Code("unsupported")
        /// The D-Bus policy does not allow this process to use BlueZ.
        public static let unauthorized = Code("unauthorized")
        /// bluetoothd is not running, restarting, or the bus connection is gone.
        public static let bluetoothUnavailable = Code("bluetoothUnavailable")
        /// Invalid arguments (including an invalid offset or length).
        public static let invalidArguments = Code("invalidArguments")
        /// The peripheral answered with an ATT error; see ``BLEError/attErrorCode``.
        public static let attError = Code("attError")
        /// Pairing or authentication failed.
        public static let authenticationFailed = Code("authenticationFailed")
        /// The resource is busy; try again.
        public static let busy = Code("busy")
        /// The peripheral's services changed; handles obtained earlier are stale.
        public static let servicesChanged = Code("servicesChanged")
        /// Data from BlueZ or the peripheral was malformed.
        public static let protocolError = Code("protocolError")
        /// Any other failure; ``BLEError/message`` says more.
        public static let failed = Code("failed")

        /// A short, human-readable form.
        public var description: String { name }
    }

    /// What went wrong.
    public var code: Code
    /// The D-Bus error name as received, e.g. `org.bluez.Error.Failed`.
    public var dbusErrorName: String?
    /// The message as received, or a description of a local failure.
    public var message: String
    /// The ATT error code, when the peripheral answered with one.
    public var attErrorCode: UInt8?
    /// Whether trying again later may succeed.
    public var isTransient: Bool
    /// The error this one was made from, if any.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, message: String, dbusErrorName: String? = nil, attErrorCode: UInt8? = nil,
        isTransient: Bool? = nil, underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.dbusErrorName = dbusErrorName
        self.attErrorCode = attErrorCode
        self.isTransient = isTransient ?? Self.transientCodes.contains(code)
        self.underlying = underlying
    }

    // An array, not a set: an error is made on every link change, and six comparisons of
    // short strings cost less than hashing one.
    static let transientCodes: [Code] = [
        .timeout, .disconnected, .inProgress, .connectionFailed, .bluetoothUnavailable, .busy,
    ]

    /// Short and free of addresses and payloads, safe for user-facing logs.
    public var description: String { "\(code): \(message)" }

    /// Everything known, for debugging.
    public var debugDescription: String {
        var text = "BLEError(\(code), \"\(message)\""
        if let dbusErrorName { text += ", dbus: \(dbusErrorName)" }
        if let attErrorCode { text += ", att: 0x" + String(attErrorCode, radix: 16) }
        if isTransient { text += ", transient" }
        if let underlying { text += ", underlying: \(underlying)" }
        return text + ")"
    }
}
