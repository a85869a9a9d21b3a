import Glibc

extension FileDescriptor {
    /// Whether the socket `fd` reports its peer gone (`POLLHUP`) or a failure (`POLLERR`), looked
    /// at without reading or waiting. On `SOCK_SEQPACKET` an empty SDU reads as 0 bytes, as the
    /// end of file does: only this tells the two apart.
    public static func reportsHangUp(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&poller, 1, 0)
        return poller.revents & Int16(POLLHUP | POLLERR) != 0
    }
}
