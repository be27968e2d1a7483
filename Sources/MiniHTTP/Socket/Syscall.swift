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

    /// Makes closing `fd` send an RST (a linger of 0 seconds) instead of a FIN.
    static func resetOnClose(_ fd: Int32) throws(SocketError) {
        var option = linger(l_onoff: 1, l_linger: 0)
        try call("setsockopt") { setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size)) }
    }

    /// Waits up to `timeout` ms for events on `epollFD`; 0 when a signal cut the wait short.
    static func wait(_ epollFD: Int32, _ events: UnsafeMutablePointer<epoll_event>, _ capacity: Int32, _ timeout: Int32) throws(SocketError) -> Int {
        let count = epoll_wait(epollFD, events, capacity, timeout)
        if count >= 0 { return Int(count) }
        let code = errno
        if code == EINTR { return 0 }
        throw SocketError(call: "epoll_wait", code: code)
    }

    /// Adds, changes or removes `fd`'s registration on `epollFD` (`EPOLL_CTL_ADD`, `_MOD`, `_DEL`).
    static func control(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, _ events: UInt32, _ token: UInt64) throws(SocketError) {
        try call("epoll_ctl") { mh_epoll_ctl(epollFD, operation, fd, events, token) }
    }

    /// Adds one to an eventfd's counter (a wakeup). A counter already at its maximum is a wakeup
    /// pending, so `EAGAIN` needs nothing more.
    static func signal(_ eventFD: Int32) throws(SocketError) {
        var one: UInt64 = 1
        do {
            try call("write") { Glibc.write(eventFD, &one, 8) }
        } catch where error.isWouldBlock {}
    }

    /// Takes an eventfd's counter back to zero; nothing to take (`EAGAIN`) is no error.
    static func drain(_ eventFD: Int32) throws(SocketError) {
        var value: UInt64 = 0
        do {
            try call("read") { Glibc.read(eventFD, &value, 8) }
        } catch where error.isWouldBlock {}
    }

    /// Makes the number `fd` name /dev/null instead, keeping it open: for a test of what a loop
    /// does when `epoll_wait` fails (EINVAL on a descriptor that is no epoll instance).
    static func replaceWithNull(_ fd: Int32) {
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard null >= 0 else { return }
        _ = dup2(null, fd)
        close(null)
    }

    /// Nanoseconds on the monotonic clock.
    static func monotonicNanoseconds() -> UInt64 { mh_monotonic_ns() }
}
