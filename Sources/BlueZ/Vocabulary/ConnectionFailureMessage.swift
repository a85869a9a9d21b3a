/// The `ERR_LE_CONN_*` and `ERR_BREDR_CONN_*` texts of `src/error.h` (bluez-dbus-api.md §8.1).
///
/// LE `Device1.Connect` in practice fails only with ``leConnectionAbortByLocal``,
/// ``bredrConnectionCanceled`` (cancelled by `Disconnect`) or
/// ``BlueZErrorMessage/inputOutputError``; the others are listed for completeness.
extension BlueZErrorMessage {
    /// `le-connection-invalid-arguments`
    public static let leConnectionInvalidArguments = "le-connection-invalid-arguments"
    /// `le-connection-adapter-not-powered`
    public static let leConnectionAdapterNotPowered = "le-connection-adapter-not-powered"
    /// `le-connection-not-supported`
    public static let leConnectionNotSupported = "le-connection-not-supported"
    /// `le-connection-already-connected`
    public static let leConnectionAlreadyConnected = "le-connection-already-connected"
    /// `le-connection-bad-socket`
    public static let leConnectionBadSocket = "le-connection-bad-socket"
    /// `le-connection-memory-allocation`
    public static let leConnectionMemoryAllocation = "le-connection-memory-allocation"
    /// `le-connection-busy`
    public static let leConnectionBusy = "le-connection-busy"
    /// `le-connection-refused`
    public static let leConnectionRefused = "le-connection-refused"
    /// `le-connection-create-socket`
    public static let leConnectionCreateSocket = "le-connection-create-socket"
    /// `le-connection-timeout`
    public static let leConnectionTimeout = "le-connection-timeout"
    /// `le-connection-concurrent-connection-limit`
    public static let leConnectionConcurrentConnectionLimit = "le-connection-concurrent-connection-limit"
    /// `le-connection-abort-by-remote`
    public static let leConnectionAbortByRemote = "le-connection-abort-by-remote"
    /// `le-connection-abort-by-local`: the generic LE connect failure (§9 Q4).
    public static let leConnectionAbortByLocal = "le-connection-abort-by-local"
    /// `le-connection-link-layer-protocol-error`
    public static let leConnectionLinkLayerProtocolError = "le-connection-link-layer-protocol-error"
    /// `le-connection-gatt-browsing`
    public static let leConnectionGattBrowsing = "le-connection-gatt-browsing"
    /// `le-connection-key-missing` (≥5.69)
    public static let leConnectionKeyMissing = "le-connection-key-missing"
    /// `le-connection-unknown`
    public static let leConnectionUnknown = "le-connection-unknown"

    /// `br-connection-already-connected`
    public static let bredrConnectionAlreadyConnected = "br-connection-already-connected"
    /// `br-connection-page-timeout`
    public static let bredrConnectionPageTimeout = "br-connection-page-timeout"
    /// `br-connection-sdp-search`
    public static let bredrConnectionSDPSearch = "br-connection-sdp-search"
    /// `br-connection-create-socket`
    public static let bredrConnectionCreateSocket = "br-connection-create-socket"
    /// `br-connection-invalid-argument`
    public static let bredrConnectionInvalidArgument = "br-connection-invalid-argument"
    /// `br-connection-adapter-not-powered`
    public static let bredrConnectionAdapterNotPowered = "br-connection-adapter-not-powered"
    /// `br-connection-not-supported`
    public static let bredrConnectionNotSupported = "br-connection-not-supported"
    /// `br-connection-bad-socket`
    public static let bredrConnectionBadSocket = "br-connection-bad-socket"
    /// `br-connection-memory-allocation`
    public static let bredrConnectionMemoryAllocation = "br-connection-memory-allocation"
    /// `br-connection-busy`
    public static let bredrConnectionBusy = "br-connection-busy"
    /// `br-connection-concurrent-connection-limit`
    public static let bredrConnectionConcurrentConnectionLimit = "br-connection-concurrent-connection-limit"
    /// `br-connection-timeout`
    public static let bredrConnectionTimeout = "br-connection-timeout"
    /// `br-connection-refused`
    public static let bredrConnectionRefused = "br-connection-refused"
    /// `br-connection-aborted-by-remote`
    public static let bredrConnectionAbortedByRemote = "br-connection-aborted-by-remote"
    /// `br-connection-aborted-by-local`
    public static let bredrConnectionAbortedByLocal = "br-connection-aborted-by-local"
    /// `br-connection-lmp-protocol-error`
    public static let bredrConnectionLMPProtocolError = "br-connection-lmp-protocol-error"
    /// `br-connection-canceled`: a pending `Connect` (LE too) cancelled by `Disconnect`.
    public static let bredrConnectionCanceled = "br-connection-canceled"
    /// `br-connection-key-missing` (≥5.69)
    public static let bredrConnectionKeyMissing = "br-connection-key-missing"
    /// `br-connection-unknown`
    public static let bredrConnectionUnknown = "br-connection-unknown"
    /// `br-connection-profile-unavailable` (5.66 only; later `BREDR.ProfileUnavailable`).
    public static let bredrConnectionProfileUnavailable = "br-connection-profile-unavailable"
}
