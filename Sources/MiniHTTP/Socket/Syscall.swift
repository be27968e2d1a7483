import CMiniHTTP
import Glibc

/// The one choke point for socket system calls: retries `EINTR`, reads `errno` at once and
/// throws a `SocketError` naming the call (house style rule 3).
enum Syscall {
    /// Runs `body` until it does not fail with `EINTR`; a negative result throws.
    @discardableResult
    static func call<Result: SignedInteger>(_ name: String, _ body: () -> Result) throws(SocketError) -> Result {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw SocketError(call: name, code: code)
        }
    }

    /// Closes `fd`, ignoring errors: after `close` the descriptor is gone whatever it returns.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Reads up to `count` bytes into `buffer`; 0 means end of stream.
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) throws(SocketError) -> Int {
        try call("read") { Glibc.read(fd, buffer, count) }
    }

    /// Copies up to `count` waiting bytes into `buffer` without taking them from the socket
    /// (`MSG_PEEK`); 0 means end of stream.
    static func peek(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) throws(SocketError) -> Int {
        try call("recv") { Glibc.recv(fd, buffer, count, Int32(MSG_PEEK)) }
    }

    /// Sends bytes with `MSG_NOSIGNAL`, so a vanished peer is an error and never a SIGPIPE.
    static func send(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) throws(SocketError) -> Int {
        try call("send") { Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL)) }
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec descriptor. With `peer`,
    /// the kernel writes the client's address there; without, none is copied out.
    static func accept(_ fd: Int32, peer: UnsafeMutablePointer<sockaddr_storage>? = nil) throws(SocketError) -> Int32 {
        guard let peer else { return try call("accept4") { mh_accept4(fd, nil, nil) } }
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return try peer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SocketError) in
            try call("accept4") { mh_accept4(fd, address, &length) }
        }
    }

    /// Sets an integer socket option.
    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SocketError) {
        var value = value
        try call("setsockopt") {
            setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Nanoseconds on the monotonic clock.
    static func monotonicNanoseconds() -> UInt64 { mh_monotonic_ns() }
}
