import BlueZ
import DBus
import Testing

@testable import BLE

/// `BLEError(DBusError)`: every error name bluetoothd and the bus send, and the `Failed`
/// messages that carry their meaning in the text (bluez-dbus-api.md §4.7, §8, §8.1).
@Suite("BLEError mapping")
struct BLEErrorMappingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var message: String
        var code: BLEError.Code
        var transient: Bool

        init(_ name: String, _ message: String = "", _ code: BLEError.Code, transient: Bool = false) {
            self.name = name
            self.message = message
            self.code = code
            self.transient = transient
        }

        var testDescription: String { "\(name.split(separator: ".").last ?? "") \"\(message)\" → \(code)" }
    }

    static let blueZNames: [Case] = [
        Case(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidArguments, .invalidArguments),
        Case(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidOffset, .invalidArguments),
        Case(BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidLength, .invalidArguments),
        Case(BlueZErrorName.inProgress, BlueZErrorMessage.inProgress, .inProgress, transient: true),
        Case(BlueZErrorName.alreadyExists, BlueZErrorMessage.alreadyExists, .alreadyExists),
        Case(BlueZErrorName.notSupported, BlueZErrorMessage.notSupported, .notSupported),
        Case(BlueZErrorName.notConnected, BlueZErrorMessage.notConnectedDefault, .notConnected),
        Case(BlueZErrorName.alreadyConnected, BlueZErrorMessage.alreadyConnected, .alreadyExists),
        Case(BlueZErrorName.notAvailable, BlueZErrorMessage.notAvailable, .notSupported),
        Case(BlueZErrorName.doesNotExist, BlueZErrorMessage.doesNotExist, .notFound),
        Case(BlueZErrorName.notAuthorized, BlueZErrorMessage.notAuthorized, .notAuthorized),
        Case(BlueZErrorName.notPermitted, BlueZErrorMessage.readNotPermitted, .notPermitted),
        Case(BlueZErrorName.notPermitted, BlueZErrorMessage.notPaired, .notPermitted),
        Case(BlueZErrorName.noSuchAdapter, BlueZErrorMessage.noSuchAdapter, .notFound),
        Case(BlueZErrorName.agentNotAvailable, BlueZErrorMessage.agentNotAvailable, .failed),
        Case(BlueZErrorName.notReady, BlueZErrorMessage.notReady, .poweredOff),
        Case(BlueZErrorName.bredrProfileUnavailable, BlueZErrorMessage.noMoreProfiles, .notSupported),
        Case(BlueZErrorName.connectionAttemptFailed, BlueZErrorMessage.pageTimeout, .connectionFailed, transient: true),
        Case(BlueZErrorName.authenticationTimeout, BlueZErrorMessage.authenticationTimeout, .timeout, transient: true),
        Case(BlueZErrorName.authenticationRejected, BlueZErrorMessage.authenticationRejected, .authenticationFailed),
        Case(BlueZErrorName.authenticationCanceled, BlueZErrorMessage.authenticationCanceled, .cancelled),
        Case(BlueZErrorName.authenticationFailed, BlueZErrorMessage.authenticationFailed, .authenticationFailed),
        Case(BlueZErrorName.busy, BlueZErrorMessage.propertyChangeInProgress, .busy, transient: true),
        Case(BlueZErrorName.busy, "", .busy, transient: true),
        Case(BlueZErrorName.blocked, BlueZErrorMessage.blockedThroughRfkill, .poweredOff),
        Case(BlueZErrorName.unsupported, BlueZErrorMessage.cannotSetPropertyWhileTemporary, .notSupported),
        Case(BlueZErrorName.rejected, "", .authenticationFailed),
        Case(BlueZErrorName.canceled, "", .cancelled),
        Case(BlueZErrorName.invalidOffset, "", .invalidArguments),
        Case(BlueZErrorName.invalidValueLength, "", .invalidArguments),
        Case(BlueZErrorName.improperlyConfigured, "", .failed),
        Case(BlueZErrorName.failedWithoutErrorSegment, "", .connectionFailed, transient: true),
    ]

    static let failedMessages: [Case] = [
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionAbortByLocal, .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, "le-connection-abort-by-remote", .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, "br-connection-page-timeout", .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, BlueZErrorMessage.bredrConnectionCanceled, .cancelled),
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionAdapterNotPowered, .poweredOff),
        Case(BlueZErrorName.failed, BlueZErrorMessage.bredrConnectionAdapterNotPowered, .poweredOff),
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionNotSupported, .notSupported),
        Case(BlueZErrorName.failed, BlueZErrorMessage.bredrConnectionProfileUnavailable, .notSupported),
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionAlreadyConnected, .alreadyExists),
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionInvalidArguments, .invalidArguments),
        Case(BlueZErrorName.failed, BlueZErrorMessage.bredrConnectionInvalidArgument, .invalidArguments),
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionKeyMissing, .authenticationFailed),
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionTimeout, .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, BlueZErrorMessage.leConnectionBusy, .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, BlueZErrorMessage.notConnected, .notConnected),
        Case(BlueZErrorName.failed, BlueZErrorMessage.operationAlreadyInProgress, .inProgress, transient: true),
        Case(BlueZErrorName.failed, BlueZErrorMessage.inputOutputError, .connectionFailed, transient: true),
        Case(
            BlueZErrorName.failed, BlueZErrorMessage.softwareCausedConnectionAbort, .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, BlueZErrorMessage.connectFailed, .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, "", .connectionFailed, transient: true),
        Case(BlueZErrorName.failed, BlueZErrorMessage.notPowered, .poweredOff),
        Case(BlueZErrorName.failed, BlueZErrorMessage.attError(0x0e), .disconnected, transient: true),
        Case(BlueZErrorName.failed, BlueZErrorMessage.attError(0x80), .attError),
        Case(BlueZErrorName.failed, BlueZErrorMessage.attError(0x9f), .attError),
        Case(BlueZErrorName.failed, BlueZErrorMessage.attError(0x11), .attError),
        Case(BlueZErrorName.failed, BlueZErrorMessage.noDiscoveryStarted, .failed),
        Case(BlueZErrorName.failed, BlueZErrorMessage.failedToInitiateWrite, .failed),
    ]

    static let busNames: [Case] = [
        Case(DBusError.StandardName.noReply, "Did not receive a reply.", .timeout, transient: true),
        Case(
            DBusError.StandardName.noReply, "Message recipient disconnected from message bus without replying",
            .bluetoothUnavailable, transient: true),
        Case(
            DBusError.StandardName.serviceUnknown, "The name org.bluez was not provided by any .service files",
            .bluetoothUnavailable, transient: true),
        Case(DBusError.StandardName.nameHasNoOwner, "", .bluetoothUnavailable, transient: true),
        Case(DBusError.StandardName.unknownObject, "Method \"Connect\" doesn't exist", .notFound),
        Case(DBusError.StandardName.accessDenied, "Rejected send message", .unauthorized),
        Case(DBusError.StandardName.disconnected, "", .bluetoothUnavailable, transient: true),
        Case(DBusError.StandardName.timeout, "", .timeout, transient: true),
        Case(DBusError.StandardName.unknownMethod, "", .notSupported),
        Case(DBusError.StandardName.unknownInterface, "", .notSupported),
        Case(DBusError.StandardName.invalidArgs, "", .invalidArguments),
        Case(DBusError.StandardName.limitsExceeded, "", .busy, transient: true),
        Case("com.example.Error.Whatever", "something", .failed),
    ]

    private static func check(_ entry: Case) {
        let error = BLEError(DBusError.reply(entry.name, entry.message))
        #expect(error.code == entry.code)
        #expect(error.dbusErrorName == entry.name, "the raw name is kept")
        #expect(error.message == entry.message, "the raw message is kept")
        #expect(error.isTransient == entry.transient)
        #expect(error.underlying is DBusError)
    }

    @Test("every org.bluez.Error name", arguments: blueZNames)
    func blueZName(_ entry: Case) { Self.check(entry) }

    @Test("org.bluez.Error.Failed by its message", arguments: failedMessages)
    func failedMessage(_ entry: Case) { Self.check(entry) }

    @Test("D-Bus errors", arguments: busNames)
    func busName(_ entry: Case) { Self.check(entry) }

    @Test("every name BlueZ documents is covered")
    func allNamesCovered() {
        let covered = Set(Self.blueZNames.map(\.name) + [BlueZErrorName.failed])
        #expect(Set(BlueZErrorName.all).subtracting(covered).isEmpty)
    }

    @Test("ATT error codes are kept")
    func attErrorCode() {
        #expect(BLEError(DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.attError(0x80))).attErrorCode == 0x80)
        #expect(BLEError(DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.attError(0x0e))).attErrorCode == 0x0e)
        #expect(BLEError(DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.notConnected)).attErrorCode == nil)
    }

    @Test("local D-Bus failures: timeout, cancellation, a lost bus, bad values")
    func localFailures() {
        let timeout = BLEError(DBusError(.timeout, name: DBusError.StandardName.noReply, message: "no reply"))
        #expect(timeout.code == .timeout)
        #expect(timeout.isTransient)
        #expect(BLEError(DBusError(.cancelled, message: "cancelled")).code == .cancelled)
        #expect(!BLEError(DBusError(.cancelled, message: "cancelled")).isTransient)
        let lost = BLEError(DBusError(.disconnected, message: "the connection is closed"))
        #expect(lost.code == .bluetoothUnavailable)
        #expect(lost.isTransient)
        #expect(BLEError(DBusError(.connectionFailed, message: "refused")).code == .bluetoothUnavailable)
        #expect(BLEError(DBusError(.typeMismatch, message: "not ay")).code == .protocolError)
        #expect(BLEError(DBusError(.invalidValue, message: "bad")).code == .protocolError)
    }

    @Test("transient codes")
    func transientCodes() {
        let transient: [BLEError.Code] = [
            .timeout, .disconnected, .inProgress, .connectionFailed, .bluetoothUnavailable, .busy,
        ]
        let permanent: [BLEError.Code] = [
            .cancelled, .notConnected, .notFound, .notPermitted, .notAuthorized, .notSupported, .alreadyExists,
            .poweredOff, .unsupported, .unauthorized, .invalidArguments, .attError, .authenticationFailed,
            .servicesChanged, .protocolError, .failed,
        ]
        for code in transient { #expect(BLEError(code, message: "").isTransient, "\(code)") }
        for code in permanent { #expect(!BLEError(code, message: "").isTransient, "\(code)") }
        #expect(!BLEError(.timeout, message: "", isTransient: false).isTransient, "an explicit value wins")
    }

    @Test("description is short; debugDescription has the details")
    func descriptions() {
        let error = BLEError(DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.attError(0x80)))
        #expect(error.description == "attError: Operation failed with ATT error: 0x80")
        #expect(error.debugDescription.contains("dbus: org.bluez.Error.Failed"))
        #expect(error.debugDescription.contains("att: 0x80"))
    }
}
