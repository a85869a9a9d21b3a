import BlueZ
import DBus

/// Why a request of a simulated remote central failed (see ``Simulator/remoteRead(characteristic:central:offset:mtu:)``).
///
/// When the central received an ATT Error Response, ``attError`` holds its code, computed the
/// way bluetoothd computes it (bluez-dbus-api.md §5.4).
public struct RemoteCentralError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable classification; new codes may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case applicationError, timeout, invalidReply, rejected, notFound, invalidArgument, notRunning
            case cancelled, socketFailed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The application answered with a D-Bus error; ``RemoteCentralError/attError`` is its
        /// translation and ``RemoteCentralError/applicationErrorName`` the name it sent.
        public static let applicationError = Code(.applicationError)
        /// The application did not answer within ``SimulatorOptions/serverRequestTimeout``
        /// (ATT 0x0E, Unlikely Error).
        public static let timeout = Code(.timeout)
        /// The application's reply had the wrong shape (ATT 0x06, Request Not Supported).
        public static let invalidReply = Code(.invalidReply)
        /// bluetoothd refused the request without asking the application: the flags do not
        /// allow it, a value is too long, or a CCC value is not allowed (ATT 0x02, 0x03, 0x0D, 0xFD).
        public static let rejected = Code(.rejected)
        /// No registered application has that characteristic or descriptor.
        public static let notFound = Code(.notFound)
        /// An argument cannot be used (e.g. a malformed central address).
        public static let invalidArgument = Code(.invalidArgument)
        /// The simulated bluetoothd is not running.
        public static let notRunning = Code(.notRunning)
        /// The task waiting for the request was cancelled.
        public static let cancelled = Code(.cancelled)
        /// An `AcquireWrite` socket could not carry the value (ATT 0x0E).
        public static let socketFailed = Code(.socketFailed)

        /// The code's name.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// The ATT error code the central received, when it received an error response.
    public var attError: UInt8?
    /// The D-Bus error name the application replied with, for ``Code/applicationError``.
    public var applicationErrorName: String?
    /// A short explanation (the application's error message for application errors).
    public var message: String

    /// Creates an error from its parts.
    public init(_ code: Code, attError: UInt8? = nil, applicationErrorName: String? = nil, message: String) {
        self.code = code
        self.attError = attError
        self.applicationErrorName = applicationErrorName
        self.message = message
    }

    /// The code, the ATT error if any, and the message.
    public var description: String {
        guard let attError else { return "\(code): \(message)" }
        let hex = String(attError, radix: 16)
        return "\(code) (ATT 0x\(hex.count < 2 ? "0" + hex : hex)): \(message)"
    }
}

extension RemoteCentralError {
    /// The error for a failed call into the application (`ReadValue`, `WriteValue`, …).
    init(call error: DBusError, isWrite: Bool) {
        switch error.code {
        case .remote:
            let name = error.name ?? DBusError.StandardName.failed
            let code = ATTErrorMapping.attError(forApplicationError: name, message: error.message, isWrite: isWrite)
            self.init(.applicationError, attError: code, applicationErrorName: name, message: error.message)
        case .timeout:
            self.init(.timeout, attError: 0x0E, message: "the application did not answer in time")
        case .cancelled:
            self.init(.cancelled, message: error.message)
        case .disconnected:
            self.init(.notRunning, message: "the simulated bluetoothd stopped")
        default:
            // Anything else that keeps the call from completing is an Unlikely Error to the peer.
            self.init(.applicationError, attError: 0x0E, message: error.message)
        }
    }

    static func rejected(_ attError: UInt8?, _ message: String) -> RemoteCentralError {
        RemoteCentralError(.rejected, attError: attError, message: message)
    }

    static let notRunning = RemoteCentralError(.notRunning, message: "the simulated bluetoothd is not running")
}
