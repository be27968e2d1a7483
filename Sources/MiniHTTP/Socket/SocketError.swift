import Glibc

/// A failed socket system call: which call, and the `errno` it left.
public struct SocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call that failed, e.g. `"bind"`.
    public var call: String
    /// The `errno` value read immediately after the call.
    public var code: Int32

    /// Creates an error for `call` with `errno` value `code`.
    public init(call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// True when a non-blocking call would have blocked (`EAGAIN`/`EWOULDBLOCK`).
    public var isWouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }

    /// True when the peer went away (`EPIPE`, `ECONNRESET`, ...).
    public var isDisconnect: Bool { code == EPIPE || code == ECONNRESET || code == ENOTCONN || code == ETIMEDOUT }

    /// `call: strerror(code)`.
    public var description: String {
        "\(call): \(String(cString: strerror(code))) (errno \(code))"
    }
}
