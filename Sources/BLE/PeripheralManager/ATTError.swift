import BlueZ
import DBus

/// An ATT error a ``PeripheralManager`` answers a central's request with, as Core Bluetooth's
/// `CBATTError.Code`.
///
/// BlueZ notes: bluetoothd carries only some codes to the central: ``readNotPermitted`` and
/// ``writeNotPermitted`` (it picks the one that matches the request), ``requestNotSupported``,
/// ``invalidOffset``, ``insufficientAuthorization``, ``invalidAttributeValueLength``,
/// ``cccImproperlyConfigured``, ``procedureAlreadyInProgress`` and the application range
/// 0x80–0x9F (``application(_:)``). Any other code reaches the central as ``unlikely``.
public struct ATTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The ATT error code.
    public let code: UInt8

    /// An error with a raw code.
    public init(code: UInt8) { self.code = code }

    /// 0x01 Invalid Handle.
    public static let invalidHandle = ATTError(code: 0x01)
    /// 0x02 Read Not Permitted.
    public static let readNotPermitted = ATTError(code: 0x02)
    /// 0x03 Write Not Permitted.
    public static let writeNotPermitted = ATTError(code: 0x03)
    /// 0x05 Insufficient Authentication (sent as ``unlikely`` by bluetoothd).
    public static let insufficientAuthentication = ATTError(code: 0x05)
    /// 0x06 Request Not Supported.
    public static let requestNotSupported = ATTError(code: 0x06)
    /// 0x07 Invalid Offset.
    public static let invalidOffset = ATTError(code: 0x07)
    /// 0x08 Insufficient Authorization.
    public static let insufficientAuthorization = ATTError(code: 0x08)
    /// 0x0D Invalid Attribute Value Length.
    public static let invalidAttributeValueLength = ATTError(code: 0x0D)
    /// 0x0E Unlikely Error.
    public static let unlikely = ATTError(code: 0x0E)
    /// 0x0F Insufficient Encryption (sent as ``unlikely`` by bluetoothd).
    public static let insufficientEncryption = ATTError(code: 0x0F)
    /// 0x11 Insufficient Resources (sent as ``unlikely`` by bluetoothd).
    public static let insufficientResources = ATTError(code: 0x11)
    /// 0xFD Client Characteristic Configuration Descriptor Improperly Configured.
    public static let cccImproperlyConfigured = ATTError(code: 0xFD)
    /// 0xFE Procedure Already in Progress.
    public static let procedureAlreadyInProgress = ATTError(code: 0xFE)

    /// An application error, 0x80–0x9F; other values give ``unlikely``.
    public static func application(_ code: UInt8) -> ATTError {
        (0x80...0x9F).contains(code) ? ATTError(code: code) : .unlikely
    }

    /// `ATT 0x0e`.
    public var description: String {
        let hex = String(code, radix: 16)
        return "ATT 0x" + (hex.count < 2 ? "0" + hex : hex)
    }

    /// The D-Bus error reply that makes bluetoothd send this code.
    var reply: DBusError { ATTErrorMapping.applicationError(forATTError: code) }
}
