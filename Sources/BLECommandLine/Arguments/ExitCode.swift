import BLE

/// The tool's exit statuses, one per kind of failure, so scripts can tell them apart.
public enum ExitCode {
    /// Done.
    public static let success: Int32 = 0
    /// Any failure not listed below.
    public static let failure: Int32 = 1
    /// The command line was wrong.
    public static let usage: Int32 = 2
    /// No bluetoothd, no such adapter, adapter off, or access denied.
    public static let bluetoothUnavailable: Int32 = 3
    /// No such device, service or characteristic.
    public static let notFound: Int32 = 4
    /// Something did not answer in time.
    public static let timeout: Int32 = 5
    /// Connecting failed, or the link dropped.
    public static let connection: Int32 = 6
    /// The device refused: not permitted, not authorized, an ATT error.
    public static let refused: Int32 = 7
    /// The device, adapter or this build cannot do it.
    public static let unsupported: Int32 = 8
    /// Stopped by Ctrl-C before it was done (128 + SIGINT).
    public static let interrupted: Int32 = 130

    /// The table printed by `ble --help`.
    static let documentation = """
        exit status:
          0    done (also: scan and notify stopped with Ctrl-C)
          1    other failure
          2    bad command line, or a value that does not fit
          3    Bluetooth unavailable: no bluetoothd, no such adapter, adapter off, access denied
          4    no such device, service or characteristic
          5    timed out
          6    connecting failed or the link dropped
          7    refused by the device (not permitted, not authorized, ATT error)
          8    not supported by the device, the adapter or this build
          130  interrupted (Ctrl-C) before done
        """

    /// The status for a failure of the BLE API.
    static func status(for error: BLEError) -> Int32 {
        switch error.code {
        case .timeout: timeout
        case .notFound: notFound
        case .bluetoothUnavailable, .poweredOff, .unsupported, .unauthorized: bluetoothUnavailable
        case .notConnected, .disconnected, .connectionFailed: connection
        case .notPermitted, .notAuthorized, .authenticationFailed, .attError: refused
        case .notSupported: unsupported
        case .invalidArguments: usage
        case .cancelled: interrupted
        default: failure
        }
    }
}
