import Glibc

/// Why an L2CAP transport call failed, classified from the socket's `errno`.
public struct L2CAPTransportError: Error, Sendable, CustomStringConvertible {
    /// A coarse classification the BLE layer maps to its own error codes.
    public enum Kind: Sendable, Hashable {
        /// The peer refused the channel (no server on the PSM, or not allowed).
        case refused
        /// The peer is not reachable (no link, or the link went down).
        case unreachable
        /// The link did not come up in time.
        case timedOut
        /// The PSM is already published on this adapter.
        case addressInUse
        /// An argument the kernel refused (a PSM out of range, an MTU too small).
        case invalidArguments
        /// Security or privileges refused it (a fixed PSM without `CAP_NET_BIND_SERVICE`).
        case notPermitted
        /// No L2CAP sockets here (a kernel without Bluetooth).
        case unsupported
        /// The channel closed.
        case closed
        /// Any other I/O failure; ``L2CAPTransportError/errno`` says which.
        case io
    }

    /// What went wrong.
    public var kind: Kind
    /// The `errno` it was made from, if any.
    public var errno: Int32?
    /// What was being done, and the system's words for the failure.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, errno: Int32? = nil, message: String) {
        self.kind = kind
        self.errno = errno
        self.message = message
    }

    /// Classifies `code`, an `errno` left by `operation`.
    public init(errno code: Int32, during operation: String) {
        let kind: Kind
        switch code {
        case ECONNREFUSED: kind = .refused
        case EHOSTUNREACH, EHOSTDOWN, ENOTCONN, ENETUNREACH, ENETDOWN, ENODEV: kind = .unreachable
        case ETIMEDOUT: kind = .timedOut
        case EADDRINUSE: kind = .addressInUse
        case EINVAL, EMSGSIZE, EADDRNOTAVAIL: kind = .invalidArguments
        case EACCES, EPERM: kind = .notPermitted
        case EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT, EOPNOTSUPP: kind = .unsupported
        case ECONNRESET, EPIPE, ECONNABORTED, EBADFD: kind = .closed
        default: kind = .io
        }
        let text = String(cString: strerror(code))
        self.init(kind, errno: code, message: "\(operation): \(text) (errno \(code))")
    }

    /// The message.
    public var description: String { message }
}
