/// The D-Bus error names bluetoothd sends, and those that agents and GATT server applications
/// send back to it (bluez-dbus-api.md §8).
///
/// Plain strings, like ``DBus/DBusError/name`` and ``DBus/DBusMessage/errorName``, so a client
/// matches with `error.name == BlueZErrorName.notPermitted` and a simulator replies with
/// `DBusError.reply(BlueZErrorName.failed, BlueZErrorMessage.notConnected)`.
public enum BlueZErrorName {
    /// `org.bluez.Error.InvalidArguments`: a bad argument or option dict; also `Invalid offset`
    /// and `Invalid Length` for ATT errors 0x07 and 0x0D.
    public static let invalidArguments = "org.bluez.Error.InvalidArguments"
    /// `org.bluez.Error.InProgress`: the same operation is already pending.
    public static let inProgress = "org.bluez.Error.InProgress"
    /// `org.bluez.Error.AlreadyExists`: already registered, paired or (5.66–5.68) already known.
    public static let alreadyExists = "org.bluez.Error.AlreadyExists"
    /// `org.bluez.Error.NotSupported`: the procedure is not possible; ATT error 0x06.
    public static let notSupported = "org.bluez.Error.NotSupported"
    /// `org.bluez.Error.NotConnected`: e.g. `StartNotify` during a `Disconnect`.
    public static let notConnected = "org.bluez.Error.NotConnected"
    /// `org.bluez.Error.AlreadyConnected`.
    public static let alreadyConnected = "org.bluez.Error.AlreadyConnected"
    /// `org.bluez.Error.NotAvailable`.
    public static let notAvailable = "org.bluez.Error.NotAvailable"
    /// `org.bluez.Error.DoesNotExist`: unknown device, registration or pairing.
    public static let doesNotExist = "org.bluez.Error.DoesNotExist"
    /// `org.bluez.Error.NotAuthorized`: ATT error 0x08, writes to claimed services.
    public static let notAuthorized = "org.bluez.Error.NotAuthorized"
    /// `org.bluez.Error.NotPermitted`: ATT read/write not permitted, not paired, acquired.
    public static let notPermitted = "org.bluez.Error.NotPermitted"
    /// `org.bluez.Error.NoSuchAdapter` (legacy).
    public static let noSuchAdapter = "org.bluez.Error.NoSuchAdapter"
    /// `org.bluez.Error.AgentNotAvailable`.
    public static let agentNotAvailable = "org.bluez.Error.AgentNotAvailable"
    /// `org.bluez.Error.NotReady`: the adapter is not powered.
    public static let notReady = "org.bluez.Error.NotReady"
    /// `org.bluez.Error.Failed`: everything else; the message says what (``BlueZErrorMessage``).
    public static let failed = "org.bluez.Error.Failed"
    /// `org.bluez.Error.BREDR.ProfileUnavailable` (≥5.84): BR/EDR connect with no profile left.
    public static let bredrProfileUnavailable = "org.bluez.Error.BREDR.ProfileUnavailable"
    /// `org.bluez.Error.ConnectionAttemptFailed`: `Pair` failed with a page timeout.
    public static let connectionAttemptFailed = "org.bluez.Error.ConnectionAttemptFailed"
    /// `org.bluez.Error.AuthenticationTimeout`.
    public static let authenticationTimeout = "org.bluez.Error.AuthenticationTimeout"
    /// `org.bluez.Error.AuthenticationRejected`.
    public static let authenticationRejected = "org.bluez.Error.AuthenticationRejected"
    /// `org.bluez.Error.AuthenticationCanceled`.
    public static let authenticationCanceled = "org.bluez.Error.AuthenticationCanceled"
    /// `org.bluez.Error.AuthenticationFailed`.
    public static let authenticationFailed = "org.bluez.Error.AuthenticationFailed"
    /// `org.bluez.Error.Busy`: a change of the same property is pending (empty message possible).
    public static let busy = "org.bluez.Error.Busy"
    /// `org.bluez.Error.Blocked`: `Powered=true` under rfkill.
    public static let blocked = "org.bluez.Error.Blocked"
    /// `org.bluez.Error.Unsupported`: setting `WakeAllowed` on a temporary device.
    public static let unsupported = "org.bluez.Error.Unsupported"
    /// `org.bluez.Error.Rejected`, returned by agents.
    public static let rejected = "org.bluez.Error.Rejected"
    /// `org.bluez.Error.Canceled`, returned by agents.
    public static let canceled = "org.bluez.Error.Canceled"
    /// `org.bluez.Error.InvalidOffset`, returned by GATT server applications (ATT 0x07).
    public static let invalidOffset = "org.bluez.Error.InvalidOffset"
    /// `org.bluez.Error.InvalidValueLength`, returned by GATT server applications (ATT 0x0D).
    public static let invalidValueLength = "org.bluez.Error.InvalidValueLength"
    /// `org.bluez.Error.ImproperlyConfigured`, returned by GATT server applications (ATT 0xFD).
    public static let improperlyConfigured = "org.bluez.Error.ImproperlyConfigured"
    /// `org.bluez.Failed` (sic, without `.Error.`): `ConnectDevice` link failure, empty message.
    /// A bluetoothd bug kept in every version; match it like ``failed``.
    public static let failedWithoutErrorSegment = "org.bluez.Failed"

    /// Every name above, in the order of the table in bluez-dbus-api.md §8.
    public static let all: [String] = [
        invalidArguments, inProgress, alreadyExists, notSupported, notConnected, alreadyConnected,
        notAvailable, doesNotExist, notAuthorized, notPermitted, noSuchAdapter, agentNotAvailable,
        notReady, failed, bredrProfileUnavailable, connectionAttemptFailed, authenticationTimeout,
        authenticationRejected, authenticationCanceled, authenticationFailed, busy, blocked,
        unsupported, rejected, canceled, invalidOffset, invalidValueLength, improperlyConfigured,
        failedWithoutErrorSegment,
    ]

    /// Whether `name` is one of bluetoothd's error names: it starts with `org.bluez.Error.` or is
    /// the misspelt ``failedWithoutErrorSegment``.
    public static func isBlueZError(_ name: String) -> Bool {
        name.hasPrefix("org.bluez.Error.") || name == failedWithoutErrorSegment
    }
}
