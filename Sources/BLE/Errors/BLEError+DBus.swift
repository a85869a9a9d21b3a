import BlueZ
import DBus

extension BLEError {
    /// Maps a D-Bus or BlueZ error the way bluez-dbus-api.md §4.7 and §8 describe them:
    /// by name first, then by the `Failed` message texts bluetoothd uses.
    init(_ error: DBusError) {
        let name = error.name
        let message = error.message
        switch error.code {
        case .timeout:
            self.init(.timeout, message: message, dbusErrorName: name, underlying: error)
            return
        case .cancelled:
            self.init(.cancelled, message: message, dbusErrorName: name, underlying: error)
            return
        case .disconnected, .connectionFailed:
            self.init(.bluetoothUnavailable, message: message, dbusErrorName: name, underlying: error)
            return
        case .typeMismatch, .invalidValue, .invalidName:
            self.init(.protocolError, message: message, dbusErrorName: name, underlying: error)
            return
        default:
            break
        }
        let code = Self.code(forName: name ?? "", message: message)
        let att = BlueZErrorMessage.attErrorCode(in: message)
        // The link dropping mid-operation surfaces as ATT "Unlikely Error" (0x0e).
        let finalCode = att == 0x0e ? Code.disconnected : code
        self.init(finalCode, message: message, dbusErrorName: name, attErrorCode: att, underlying: error)
    }

    private static func code(forName name: String, message: String) -> Code {
        switch name {
        case BlueZErrorName.failed, "org.bluez.Failed":
            return failedCode(message)
        case BlueZErrorName.inProgress: return .inProgress
        case BlueZErrorName.notReady: return .poweredOff
        case BlueZErrorName.notPermitted: return .notPermitted
        case BlueZErrorName.notAuthorized: return .notAuthorized
        case BlueZErrorName.notSupported, BlueZErrorName.notAvailable, BlueZErrorName.bredrProfileUnavailable,
            BlueZErrorName.unsupported:
            return .notSupported
        case BlueZErrorName.invalidArguments, BlueZErrorName.invalidOffset, BlueZErrorName.invalidValueLength:
            return .invalidArguments
        case BlueZErrorName.alreadyExists, BlueZErrorName.alreadyConnected: return .alreadyExists
        case BlueZErrorName.doesNotExist, BlueZErrorName.noSuchAdapter: return .notFound
        case BlueZErrorName.notConnected: return .notConnected
        case BlueZErrorName.busy: return .busy
        case BlueZErrorName.blocked: return .poweredOff
        case BlueZErrorName.connectionAttemptFailed: return .connectionFailed
        case BlueZErrorName.authenticationFailed, BlueZErrorName.authenticationRejected, BlueZErrorName.rejected:
            return .authenticationFailed
        // Pair's other endings: nobody answered in time; the pairing was cancelled (CancelPairing
        // or the link dropping, MGMT_STATUS_DISCONNECTED).
        case BlueZErrorName.authenticationTimeout: return .timeout
        case BlueZErrorName.authenticationCanceled: return .cancelled
        case BlueZErrorName.canceled: return .cancelled
        case DBusError.StandardName.noReply:
            // The bus sends NoReply both for its own reply timeout and when bluetoothd left the
            // bus with the call unanswered ("Message recipient disconnected …").
            return message.contains("disconnected") ? .bluetoothUnavailable : .timeout
        case DBusError.StandardName.timeout: return .timeout
        case DBusError.StandardName.serviceUnknown, DBusError.StandardName.nameHasNoOwner,
            DBusError.StandardName.disconnected:
            return .bluetoothUnavailable
        case DBusError.StandardName.unknownObject: return .notFound
        case DBusError.StandardName.accessDenied: return .unauthorized
        case DBusError.StandardName.unknownMethod, DBusError.StandardName.unknownInterface: return .notSupported
        case DBusError.StandardName.invalidArgs: return .invalidArguments
        case DBusError.StandardName.limitsExceeded: return .busy
        default: return .failed
        }
    }

    /// `org.bluez.Error.Failed` carries its meaning in the message (§8.1).
    private static func failedCode(_ message: String) -> Code {
        if message == BlueZErrorMessage.bredrConnectionCanceled { return .cancelled }
        if message.hasPrefix("le-connection-") || message.hasPrefix("br-connection-") {
            // Connection failures that retrying cannot cure keep their own code.
            let reason = message.split(separator: "-").dropFirst(2).joined(separator: "-")
            switch reason {
            case "adapter-not-powered": return .poweredOff
            case "not-supported", "profile-unavailable": return .notSupported
            case "already-connected": return .alreadyExists
            case "invalid-arguments", "invalid-argument": return .invalidArguments
            case "key-missing": return .authenticationFailed
            default: return .connectionFailed
            }
        }
        switch message {
        case BlueZErrorMessage.notConnected: return .notConnected
        case BlueZErrorMessage.operationAlreadyInProgress: return .inProgress
        case BlueZErrorMessage.inputOutputError, BlueZErrorMessage.softwareCausedConnectionAbort,
            BlueZErrorMessage.connectFailed, "":
            return .connectionFailed
        case BlueZErrorMessage.notPowered: return .poweredOff
        default:
            return BlueZErrorMessage.attErrorCode(in: message) != nil ? .attError : .failed
        }
    }
}

extension BLEError {
    static func timeout(_ what: String) -> BLEError { BLEError(.timeout, message: "\(what) timed out") }
    static var cancelledByTask: BLEError { BLEError(.cancelled, message: "the task was cancelled") }
    /// A handle (or a wait on one) whose characteristic BlueZ removed.
    static var servicesChangedUnder: BLEError {
        BLEError(.servicesChanged, message: "the peripheral's services changed; discover them again")
    }
    static var bluetoothGone: BLEError {
        BLEError(.bluetoothUnavailable, message: "bluetoothd is not available", isTransient: true)
    }
}
