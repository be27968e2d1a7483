import CMiniHTTP
import Glibc

/// A bound, listening, non-blocking TCP socket (IPv4 or IPv6).
final class ListeningSocket: Sendable {
    /// The descriptor; owned by this object until `close()`.
    let fd: Int32
    /// The host as bound (numeric form; an IPv6 address without brackets).
    let host: String
    /// The port actually bound (the ephemeral one when 0 was asked for).
    let port: Int

    /// Binds `host:port` and listens. `host` is an IPv4 or IPv6 literal, or `localhost`.
    init(host: String, port: Int, backlog: Int32) throws(SocketError) {
        guard (0...65535).contains(port) else { throw SocketError(call: "bind", code: EINVAL) }
        let literal = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        // An IPv6 literal may come bracketed (`[::1]`, as in a URL): the bound host is kept bare,
        // so whoever puts it in a URL brackets it once (`http://[[::1]]:PORT`).
        let stripped = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
        } else {
            guard inet_pton(AF_INET6, stripped, &v6.sin6_addr) == 1 else {
                throw SocketError(call: "inet_pton", code: EINVAL)
            }
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
        }
        let address = family == AF_INET6 ? "[\(stripped)]:\(port)" : "\(literal):\(port)"
        let fd = try Syscall.call("socket") {
            socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            try Syscall.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if family == AF_INET6 {
                // "::" serves IPv4 too; a specific IPv6 address serves only itself.
                try Syscall.setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0)
                try Syscall.call("bind") {
                    withUnsafePointer(to: &v6) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                        }
                    }
                }
            } else {
                try Syscall.call("bind") {
                    withUnsafePointer(to: &v4) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                }
            }
            try Syscall.call("listen") { listen(fd, backlog) }
            self.port = try Self.boundPort(fd)
        } catch {
            Syscall.close(fd)
            // Which address could not be had is the first thing a reader needs ("in use" by what?).
            var error = error
            if error.call == "bind" || error.call == "listen" { error.address = address }
            throw error
        }
        self.fd = fd
        self.host = family == AF_INET6 ? stripped : literal
    }

    /// Reads back the bound port with `getsockname`.
    private static func boundPort(_ fd: Int32) throws(SocketError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        try Syscall.call("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
        }
        return withUnsafePointer(to: &storage) { pointer -> Int in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// Stops listening at once: new connections are refused, queued ones reset, and `accept`
    /// fails with `EINVAL`. The descriptor stays open (its number cannot be reused) until `close()`.
    func stopListening() {
        _ = try? Syscall.call("shutdown") { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Closes the descriptor.
    func close() { Syscall.close(fd) }
}
