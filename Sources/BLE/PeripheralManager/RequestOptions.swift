import DBus

/// The options dict bluetoothd passes with `ReadValue`, `WriteValue` and `AcquireNotify`
/// (`append_options`, bluez-dbus-api.md §5.4): `device`, `offset` (only when non-zero),
/// `link`, `prepare-authorize` (only when true), `mtu`; newer releases may add `type`.
struct RequestOptions: Sendable, Hashable {
    var device: ObjectPath?
    var offset: UInt16 = 0
    var mtu: UInt16?
    var prepareAuthorize = false
    var type: String?

    /// Reads the `a{sv}` argument; unknown keys and keys of the wrong type are ignored.
    init(_ value: DBusValue?) {
        guard case .dictionary(.string, .variant, let entries)? = value else { return }
        for entry in entries {
            guard case .string(let key) = entry.key else { continue }
            switch (key, entry.value.unwrappingVariant) {
            case ("device", .objectPath(let path)): device = path
            case ("offset", .uint16(let offset)): self.offset = offset
            case ("mtu", .uint16(let mtu)): self.mtu = mtu
            case ("prepare-authorize", .boolean(let flag)): prepareAuthorize = flag
            case ("type", .string(let type)): self.type = type
            default: continue
            }
        }
    }

    /// The central named by `device`.
    var central: CentralID? { device.flatMap(CentralID.init(devicePath:)) }

    /// The write type: a call without reply is a command; `prepare-authorize` a prepared write.
    func writeType(noReplyExpected: Bool) -> WriteRequestType {
        if noReplyExpected || type == "command" { return .command }
        if prepareAuthorize || type == "reliable" { return .reliable }
        return .request
    }
}
