/// The exact messages bluetoothd puts in its error replies (bluez-dbus-api.md §4.7, §8, §8.1).
///
/// Every error bluetoothd sends carries exactly one string argument, possibly empty. Clients
/// match on these texts (bleak does), so a simulator must send them byte for byte.
public enum BlueZErrorMessage {
    // MARK: Default messages of the error names (src/error.c)

    /// `Invalid arguments in method call`, default of `InvalidArguments`.
    public static let invalidArguments = "Invalid arguments in method call"
    /// `Operation already in progress` (`btd_error_busy`), an `InProgress` message; also the
    /// `Failed` text of a second concurrent LE `Connect` on 5.66.
    public static let operationAlreadyInProgress = "Operation already in progress"
    /// `In Progress`, the `InProgress` message of GATT operations and ≥5.82 `Connect`.
    public static let inProgress = "In Progress"
    /// `Already Exists`, default of `AlreadyExists`.
    public static let alreadyExists = "Already Exists"
    /// `Already Paired`, `AlreadyExists` from `Pair`.
    public static let alreadyPaired = "Already Paired"
    /// `Operation is not supported`, default of `NotSupported` (also ATT error 0x06).
    public static let notSupported = "Operation is not supported"
    /// `Not Connected` (capital C), default of the `NotConnected` error name.
    ///
    /// Not to be confused with ``notConnected``, the `Failed` message of GATT calls.
    public static let notConnectedDefault = "Not Connected"
    /// `Already Connected`, default of `AlreadyConnected`.
    public static let alreadyConnected = "Already Connected"
    /// `Operation currently not available`, default of `NotAvailable`.
    public static let notAvailable = "Operation currently not available"
    /// `Does Not Exist`, default of `DoesNotExist`.
    public static let doesNotExist = "Does Not Exist"
    /// `Operation Not Authorized`, default of `NotAuthorized` (also ATT error 0x08).
    public static let notAuthorized = "Operation Not Authorized"
    /// `No such adapter`, default of `NoSuchAdapter`.
    public static let noSuchAdapter = "No such adapter"
    /// `Agent Not Available`, default of `AgentNotAvailable`.
    public static let agentNotAvailable = "Agent Not Available"
    /// `Resource Not Ready`, default of `NotReady`.
    public static let notReady = "Resource Not Ready"
    /// `No more profiles to connect to`, message of `BREDR.ProfileUnavailable`.
    public static let noMoreProfiles = "No more profiles to connect to"
    /// `Page Timeout`, message of `ConnectionAttemptFailed`.
    public static let pageTimeout = "Page Timeout"
    /// `Authentication Timeout`.
    public static let authenticationTimeout = "Authentication Timeout"
    /// `Authentication Rejected`.
    public static let authenticationRejected = "Authentication Rejected"
    /// `Authentication Canceled`.
    public static let authenticationCanceled = "Authentication Canceled"
    /// `Authentication Failed`.
    public static let authenticationFailed = "Authentication Failed"
    /// `Property change in progress`, a `Busy` message.
    public static let propertyChangeInProgress = "Property change in progress"
    /// `Blocked through rfkill`, message of `Blocked`.
    public static let blockedThroughRfkill = "Blocked through rfkill"
    /// `Cannot set property while temporary`, message of `Unsupported`.
    public static let cannotSetPropertyWhileTemporary = "Cannot set property while temporary"

    // MARK: NotPermitted and InvalidArguments texts of GATT operations (§4.7)

    /// `Read not permitted`: ATT error 0x02.
    public static let readNotPermitted = "Read not permitted"
    /// `Write not permitted`: ATT error 0x03, and any write to a CCC descriptor.
    public static let writeNotPermitted = "Write not permitted"
    /// `Not paired`: ATT errors 0x05, 0x0C, 0x0F.
    public static let notPaired = "Not paired"
    /// `Write acquired`: `WriteValue` or `AcquireWrite` while `AcquireWrite` is active.
    public static let writeAcquired = "Write acquired"
    /// `Notify acquired`: `StartNotify` or `AcquireNotify` while `AcquireNotify` is active.
    public static let notifyAcquired = "Notify acquired"
    /// `Maximum advertisements reached`, from `RegisterAdvertisement`.
    public static let maximumAdvertisementsReached = "Maximum advertisements reached"
    /// `Invalid offset`: ATT error 0x07.
    public static let invalidOffset = "Invalid offset"
    /// `Invalid Length`: ATT error 0x0D.
    public static let invalidLength = "Invalid Length"

    // MARK: Failed texts (§8.1)

    /// `Not connected` (lower-case c): any GATT call on a device without a live GATT client.
    public static let notConnected = "Not connected"
    /// `No discovery started`: `StopDiscovery` from a client without a session.
    public static let noDiscoveryStarted = "No discovery started"
    /// `No notify session started`: `StopNotify` from a client without a session.
    public static let noNotifySessionStarted = "No notify session started"
    /// `Failed to initiate write`: a write command longer than MTU − 3, or a full queue.
    public static let failedToInitiateWrite = "Failed to initiate write"
    /// `Failed to send read request`.
    public static let failedToSendReadRequest = "Failed to send read request"
    /// `No ATT transport`: a write request while the MTU is 0.
    public static let noATTTransport = "No ATT transport"
    /// `Failed allocate notify session` (sic).
    public static let failedAllocateNotifySession = "Failed allocate notify session"
    /// `Failed to register notify session`.
    public static let failedToRegisterNotifySession = "Failed to register notify session"
    /// `Failed to subscribe`, from `AcquireNotify`.
    public static let failedToSubscribe = "Failed to subscribe"
    /// `Powering down`: setting `Powered` while bluetoothd shuts down.
    public static let poweringDown = "Powering down"
    /// `Not Powered`: setting `Discoverable` on an unpowered adapter.
    public static let notPowered = "Not Powered"
    /// `Connect failed`: synchronous `ConnectDevice` socket failure.
    public static let connectFailed = "Connect failed"
    /// `Input/output error` (strerror(EIO)): LE `Connect` could not create its socket.
    public static let inputOutputError = "Input/output error"
    /// `Software caused connection abort` (strerror(ECONNABORTED)): pre-5.62 LE connect failure,
    /// and `Pair` on the ATT-first path.
    public static let softwareCausedConnectionAbort = "Software caused connection abort"
    /// `Bad address` (strerror(EFAULT)): characteristic removed during a write.
    public static let badAddress = "Bad address"
    /// `Kernel lacks reject list support`: setting `Blocked`.
    public static let kernelLacksRejectListSupport = "Kernel lacks reject list support"
    /// `Failed to register application`.
    public static let failedToRegisterApplication = "Failed to register application"
    /// `No object received`: the application's `GetManagedObjects` returned nothing.
    public static let noObjectReceived = "No object received"
    /// `No valid service object found`.
    public static let noValidServiceObjectFound = "No valid service object found"
    /// `Failed to create entry in database`.
    public static let failedToCreateEntryInDatabase = "Failed to create entry in database"
    /// `Failed to parse advertisement.` (with the full stop).
    public static let failedToParseAdvertisement = "Failed to parse advertisement."
    /// `Failed to register advertisement`.
    public static let failedToRegisterAdvertisement = "Failed to register advertisement"
    /// `Failed to complete registration`.
    public static let failedToCompleteRegistration = "Failed to complete registration"
    /// `Failed to set as default`, from `RequestDefaultAgent`.
    public static let failedToSetAsDefault = "Failed to set as default"

    // MARK: ATT errors

    /// The prefix of ``attError(_:)`` messages.
    public static let attErrorPrefix = "Operation failed with ATT error: 0x"

    /// `Operation failed with ATT error: 0x%02x`, the `Failed` message of an ATT error without
    /// a dedicated mapping (§4.7); `0x0e` also means the link dropped during the request.
    public static func attError(_ code: UInt8) -> String {
        let hex = String(code, radix: 16)
        return attErrorPrefix + (hex.count < 2 ? "0" + hex : hex)
    }

    /// The ATT error code in an ``attError(_:)`` message, or `nil` for any other text.
    public static func attErrorCode(in message: String) -> UInt8? {
        guard message.hasPrefix(attErrorPrefix) else { return nil }
        let digits = message.dropFirst(attErrorPrefix.count)
        guard digits.count == 2 else { return nil }
        return UInt8(digits, radix: 16)
    }
}
