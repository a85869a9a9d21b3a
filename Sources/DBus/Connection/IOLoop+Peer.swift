import CDBus

/// `org.freedesktop.DBus.Peer`, which every connection answers: libdbus answers it inside
/// `dbus_connection_dispatch`, which the loop does not use (it pops messages itself), so the
/// loop answers it as libdbus would.
extension IOLoop {
    /// Answers `raw` when it is a call to `org.freedesktop.DBus.Peer` (`Ping`, `GetMachineId`,
    /// `UnknownMethod` for anything else) and returns true; false for any other message.
    func answeredPeerCall(_ raw: OpaquePointer) -> Bool {
        guard dbus_message_get_type(raw) == MessageTypeCode.methodCall,
            dbus_message_has_interface(raw, InterfaceName.peer.rawValue) != 0
        else { return false }
        let address = ReplyAddress(received: raw)
        switch dbus_message_get_member(raw).map({ String(cString: $0) }) {
        case "Ping":
            reply(to: address, with: .success([]), expecting: nil)
        case "GetMachineId":
            reply(to: address, with: Self.machineID(), expecting: nil)
        case let member:
            let text = "unknown method \(member ?? "") of \(InterfaceName.peer.rawValue)"
            reply(
                to: address, with: .failure(DBusError.reply(DBusError.StandardName.unknownMethod, text)), expecting: nil
            )
        }
        return true
    }

    /// This machine's D-Bus id (the hex string in /etc/machine-id), as libdbus reads it.
    private static func machineID() -> Result<[DBusValue], DBusError> {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let id = dbus_try_get_local_machine_id(&error) else {
            let text = error.message.map { String(cString: $0) } ?? "no machine id"
            return .failure(DBusError.reply(DBusError.StandardName.failed, text))
        }
        defer { dbus_free(id) }
        return .success([.string(String(cString: id))])
    }
}
