import DBus
import Foundation
import Glibc

/// The app's end of an `AcquireWrite` socket (server side): bluetoothd writes each write
/// without response of a central into it as one datagram, with no D-Bus message per write;
/// the `AcquireWrite` call named the central and its MTU. bluetoothd hangs up when the link
/// goes, and acquires a new socket at the next write.
final class AcquiredWriteChannel: Sendable {
    /// The central whose write opened the channel.
    let central: CentralID?
    private let reader: DatagramReader

    /// Makes a socket pair whose datagrams go to `received`; returns the channel and the end
    /// to hand to bluetoothd.
    static func open(
        central: CentralID?, on connection: Connection, received: @escaping @Sendable (Data) -> Void,
        closed: @escaping @Sendable () -> Void
    ) throws(BLEError) -> (AcquiredWriteChannel, FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw BLEError(.failed, message: "socketpair failed: errno \(errno)")
        }
        let reader = DatagramReader(
            descriptor: FileDescriptor(owning: fds[0]), connection: connection, received: received, hangup: closed)
        return (AcquiredWriteChannel(central: central, reader: reader), FileDescriptor(owning: fds[1]))
    }

    private init(central: CentralID?, reader: DatagramReader) {
        self.central = central
        self.reader = reader
    }

    deinit { close() }

    /// Hangs up: bluetoothd sees the channel close and goes back to `WriteValue`.
    func close() { reader.cancel() }
}
