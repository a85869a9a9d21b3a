import CDBus
import DBus
import Foundation
import Synchronization

/// Records every message that crosses a bus, as `dbus-monitor` does
/// (`org.freedesktop.DBus.Monitoring.BecomeMonitor`): for tests that check what a client and
/// a daemon said to each other. The bus must let the caller monitor (the same user as the
/// daemon, or root; ``TestBus`` does).
///
/// The monitor runs on its own libdbus connection and thread rather than on a ``Connection``:
/// a monitor must never send anything, and a ``Connection`` answers the method calls it sees.
public final class BusMonitor: Sendable {
    /// What the monitor saw so far, in the order the bus routed it.
    private let recorded = PosixMutex<[DBusMessage]>([])
    /// Set by ``stop()``; the reading thread ends when it sees it.
    private let stopping = Atomic<Bool>(false)
    /// Signalled by the reading thread when it has closed the connection.
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the reading thread runs and ``stop()`` has to wait for it (not when `init` threw).
    private let started = Atomic<Bool>(false)

    /// Connects to `bus` and turns the connection into a monitor of every message.
    ///
    /// - Throws: ``DBusError`` when the bus cannot be reached or refuses to be monitored.
    public init(bus: Connection.Bus) throws(DBus.DBusError) {
        let raw = try Self.openMonitor(bus)
        let handle = RawConnection(pointer: raw)
        let thread = Thread { [self] in self.read(handle) }
        thread.name = "dbus-monitor"
        started.store(true, ordering: .releasing)
        thread.start()
    }

    deinit { stop() }

    /// Every message recorded so far (messages the decoder rejects are left out).
    public var messages: [DBusMessage] { recorded.withLock { $0 } }

    /// Stops monitoring and closes the connection; the recorded messages stay. Idempotent.
    public func stop() {
        guard started.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopping.store(true, ordering: .releasing)
        finished.wait()
    }

    private func read(_ handle: RawConnection) {
        let raw = handle.pointer
        // read_write returns false once the bus is gone; 50 ms bounds how long stop() waits.
        while !stopping.load(ordering: .acquiring), dbus_connection_read_write(raw, 50) != 0 {
            while let message = dbus_connection_pop_message(raw) {
                if let decoded = Self.decode(message) { recorded.withLock { $0.append(decoded) } }
                dbus_message_unref(message)
            }
        }
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
        finished.signal()
    }

    /// A message as the monitor received it, through its wire format (the one public way in).
    private static func decode(_ message: OpaquePointer) -> DBusMessage? {
        var pointer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(message, &pointer, &length) != 0, let pointer else { return nil }
        defer { dbus_free(pointer) }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: Int(length)).map { $0 }
        return try? DBusMessage(wireFormat: bytes)
    }

    private static func openMonitor(_ bus: Connection.Bus) throws(DBus.DBusError) -> OpaquePointer {
        dbus_threads_init_default()
        guard let error = cdbus_error_new() else { throw DBus.DBusError(.limitExceeded, message: "out of memory") }
        defer { cdbus_error_delete(error) }
        let opened: OpaquePointer?
        switch bus {
        case .system: opened = dbus_bus_get_private(DBUS_BUS_SYSTEM, error)
        case .session: opened = dbus_bus_get_private(DBUS_BUS_SESSION, error)
        case .address(let address):
            opened = dbus_connection_open_private(address, error)
            if let opened, dbus_bus_register(opened, error) == 0 {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw Self.failure(error, "cannot register with \(bus)")
            }
        }
        guard let raw = opened else { throw Self.failure(error, "cannot connect to \(bus)") }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        do {
            try becomeMonitor(raw, error)
        } catch {
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw error
        }
        return raw
    }

    /// BecomeMonitor with no rules (everything) and no flags, built through the wire format.
    private static func becomeMonitor(_ raw: OpaquePointer, _ error: UnsafeMutablePointer<CDBus.DBusError>)
        throws(DBus.DBusError)
    {
        let call = DBusMessage(
            kind: .methodCall, path: try ObjectPath("/org/freedesktop/DBus"),
            interface: try InterfaceName("org.freedesktop.DBus.Monitoring"), member: try MemberName("BecomeMonitor"),
            // A serial far above the few the connection itself uses (Hello).
            destination: try BusName("org.freedesktop.DBus"), serial: 0x7fff_0000,
            body: [.array(.string, []), .uint32(0)]
        )
        let bytes = try call.wireFormat()
        let message = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32($0.count), error) }
        }
        guard let message else { throw Self.failure(error, "cannot build BecomeMonitor") }
        defer { dbus_message_unref(message) }
        guard let reply = dbus_connection_send_with_reply_and_block(raw, message, 10_000, error) else {
            throw Self.failure(error, "the bus refused BecomeMonitor")
        }
        dbus_message_unref(reply)
    }

    private static func failure(_ error: UnsafeMutablePointer<CDBus.DBusError>, _ fallback: String) -> DBus.DBusError {
        let name = error.pointee.name.map { String(cString: $0) }
        let text = error.pointee.message.map { String(cString: $0) } ?? fallback
        return DBus.DBusError(.connectionFailed, name: name, message: text)
    }
}

/// The libdbus connection, handed once from `init` to the reading thread that alone uses it.
private struct RawConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}
