extension VirtualCharacteristic {
    /// Whether the peer answers a read of it on a link secured to `security`, as bluetoothd's
    /// own reads meet it (the gap, deviceinfo and battery plugins): readable, no scripted
    /// error, and no more security than the link has. A client's `ReadValue` can raise the
    /// link's security first (`Daemon.readValue`).
    func servesRead(on security: AttributeSecurity) -> Bool {
        flags.contains("read") && readError == nil && AttributeSecurity.required(by: flags, for: .read) <= security
    }
}
