import Glibc

/// A failed socket system call: which call, and the `errno` it left.
public struct SocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call that failed, e.g. `"bind"`.
    public var call: String
    /// The `errno` value read immediately after the call.
    public var code: Int32
    /// The local address the call concerned, `host:port` (`[::1]:8080`), for a failed bind.
    public var address: String?

    /// Creates an error for `call` with `errno` value `code`, about `address` when given.
    public init(call: String, code: Int32, address: String? = nil) {
        self.call = call
        self.code = code
        self.address = address
    }

    /// `strerror(code) (errno code)`, e.g. `Address already in use (errno 98)`.
    public var reason: String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    /// True when a non-blocking call would have blocked (`EAGAIN`/`EWOULDBLOCK`).
    public var isWouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }

    /// True when the peer went away (`EPIPE`, `ECONNRESET`, ...).
    public var isDisconnect: Bool { code == EPIPE || code == ECONNRESET || code == ENOTCONN || code == ETIMEDOUT }

    /// `call: strerror(code) (errno code)`, with the address after the call when known
    /// (`bind 127.0.0.1:8080: Address already in use (errno 98)`).
    public var description: String {
        address.map { "\(call) \($0): \(reason)" } ?? "\(call): \(reason)"
    }
}
