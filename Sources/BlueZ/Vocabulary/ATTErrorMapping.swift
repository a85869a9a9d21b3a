import DBus

/// How bluetoothd translates between ATT error codes and D-Bus errors.
///
/// The client direction (`create_gatt_dbus_error`, bluez-dbus-api.md §4.7) is what a remote
/// peer's ATT error looks like to a D-Bus client; the server direction
/// (`dbus_error_to_att_ecode`, §5.4) is which ATT error a peer receives when a local GATT
/// application answers bluetoothd with a D-Bus error.
public enum ATTErrorMapping {
    /// The D-Bus error a client receives when the peer answered a GATT request with ATT error
    /// `code` (§4.7); 0x0E (Unlikely Error) is also what a request gets when the link drops.
    public static func clientError(forATTError code: UInt8) -> DBusError {
        let (name, message): (String, String)
        switch code {
        case 0x02: (name, message) = (BlueZErrorName.notPermitted, BlueZErrorMessage.readNotPermitted)
        case 0x03: (name, message) = (BlueZErrorName.notPermitted, BlueZErrorMessage.writeNotPermitted)
        case 0x05, 0x0C, 0x0F: (name, message) = (BlueZErrorName.notPermitted, BlueZErrorMessage.notPaired)
        case 0x07: (name, message) = (BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidOffset)
        case 0x0D: (name, message) = (BlueZErrorName.invalidArguments, BlueZErrorMessage.invalidLength)
        case 0x08: (name, message) = (BlueZErrorName.notAuthorized, BlueZErrorMessage.notAuthorized)
        case 0x06: (name, message) = (BlueZErrorName.notSupported, BlueZErrorMessage.notSupported)
        default: (name, message) = (BlueZErrorName.failed, BlueZErrorMessage.attError(code))
        }
        return DBusError.reply(name, message)
    }

    /// The ATT error a peer receives when a local GATT application replied to `ReadValue`
    /// (`isWrite` false) or `WriteValue` (`isWrite` true) with the D-Bus error `name` and
    /// `message` (§5.4).
    ///
    /// `org.bluez.Error.Failed` carries an application error code as its message (`"0x80"` …
    /// `"0x9f"`, read like C's `strtol` with base 0); a non-numeric message gives 0x80 and a
    /// number outside that range 0x0E. Unknown error names give 0x0E (Unlikely Error).
    public static func attError(forApplicationError name: String, message: String, isWrite: Bool) -> UInt8 {
        switch name {
        case BlueZErrorName.failed: return applicationErrorCode(message)
        case BlueZErrorName.notSupported: return 0x06
        case BlueZErrorName.notAuthorized: return 0x08
        case BlueZErrorName.invalidValueLength: return 0x0D
        case BlueZErrorName.invalidOffset: return 0x07
        case BlueZErrorName.inProgress: return 0xFE
        case BlueZErrorName.improperlyConfigured: return 0xFD
        case BlueZErrorName.notPermitted: return isWrite ? 0x03 : 0x02
        default: return 0x0E
        }
    }

    /// The D-Bus error a local GATT application replies with so that bluetoothd sends the peer
    /// ATT error `code` (the inverse of ``attError(forApplicationError:message:isWrite:)``).
    ///
    /// bluetoothd can carry only some codes: 0x02/0x03 (as `NotPermitted`, which it turns into
    /// 0x02 on reads and 0x03 on writes), 0x06, 0x07, 0x08, 0x0D, 0xFD, 0xFE and the
    /// application range 0x80–0x9F. Every other code reaches the peer as 0x0E (Unlikely Error).
    public static func applicationError(forATTError code: UInt8) -> DBusError {
        switch code {
        case 0x02, 0x03: return DBusError.reply(BlueZErrorName.notPermitted, "Not permitted")
        case 0x06: return DBusError.reply(BlueZErrorName.notSupported, "Not supported")
        case 0x07: return DBusError.reply(BlueZErrorName.invalidOffset, "Invalid offset")
        case 0x08: return DBusError.reply(BlueZErrorName.notAuthorized, "Not authorized")
        case 0x0D: return DBusError.reply(BlueZErrorName.invalidValueLength, "Invalid value length")
        case 0xFD: return DBusError.reply(BlueZErrorName.improperlyConfigured, "Improperly configured")
        case 0xFE: return DBusError.reply(BlueZErrorName.inProgress, "In progress")
        case 0x80...0x9F: return DBusError.reply(BlueZErrorName.failed, "0x" + String(code, radix: 16))
        default: return DBusError.reply(BlueZErrorName.failed, "0x0e")
        }
    }

    /// `strtol(message, &end, 0)` restricted to the application error range 0x80–0x9F.
    private static func applicationErrorCode(_ message: String) -> UInt8 {
        guard let value = cNumber(message) else { return 0x80 }
        return (0x80...0x9F).contains(value) ? UInt8(value) : 0x0E
    }

    /// The leading number of `text` as `strtol` with base 0 reads it (leading spaces, an
    /// optional sign, `0x` hex, `0` octal or decimal), or `nil` when no digit is read.
    private static func cNumber(_ text: String) -> Int? {
        var scalars = Substring(text).drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" })
        var negative = false
        if let sign = scalars.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            scalars = scalars.dropFirst()
        }
        var radix = 10
        let lower = scalars.lowercased()
        if lower.hasPrefix("0x"), let third = scalars.dropFirst(2).first, third.isHexDigit {
            radix = 16
            scalars = scalars.dropFirst(2)
        } else if scalars.first == "0" {
            radix = 8
        }
        let digits = scalars.prefix(while: { $0.isASCII && $0.hexDigitValue.map { $0 < radix } == true })
        // Clamp absurdly long numbers instead of overflowing: anything this long is out of range.
        guard !digits.isEmpty else { return nil }
        guard digits.count <= 12, let magnitude = Int(digits, radix: radix) else { return Int.max }
        return negative ? -magnitude : magnitude
    }
}
