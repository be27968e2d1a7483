import Glibc

/// A lean blocking keep-alive HTTP/1.1 client: the load generator's CPU comes out of the same
/// two cores as the server's, so it parses no more than the status and Content-Length.
/// One thread uses a connection at a time.
final class RawConnection: @unchecked Sendable {
    /// Errors, with the call or the reason.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    private var filled = 0

    /// Connects to 127.0.0.1:`port`.
    init(port: Int, timeoutSeconds: Int = 30) throws(Failure) {
        fd = try Self.connectedSocket(port: port, timeoutSeconds: timeoutSeconds)
    }

    /// A blocking TCP socket connected to 127.0.0.1:`port`, with send and receive timeouts and
    /// Nagle off (also the SMTP load's).
    static func connectedSocket(port: Int, timeoutSeconds: Int = 30) throws(Failure) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var limit = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            let code = errno
            close(fd)
            throw Failure(description: "connect: \(String(cString: strerror(code)))")
        }
        return fd
    }

    deinit { close(fd) }

    /// Sends `request` and reads one response: its status and body.
    func exchange(_ request: [UInt8]) throws(Failure) -> (status: Int, body: ArraySlice<UInt8>) {
        try start(request)
        while true {
            if let response = try poll() { return response }
        }
    }

    /// `GET /auth/keys`, the request most figures time.
    static let keysRequest = Array("GET /auth/keys HTTP/1.1\r\nHost: bench\r\n\r\n".utf8)
    /// `GET /__mock/health` from a local caller (the control API answers local hosts only).
    static let healthRequest = Array("GET /__mock/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    private func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// Sends a request without waiting for its answer; `poll(_:)` picks the answer up.
    func start(_ request: [UInt8]) throws(Failure) {
        filled = 0
        try send(request)
    }

    /// Reads what has arrived (the socket is readable) and returns the response once complete.
    func poll() throws(Failure) -> (status: Int, body: ArraySlice<UInt8>)? {
        try fill()
        return try complete()
    }

    /// The response in the buffer, if all of it has arrived.
    private func complete() throws(Failure) -> (status: Int, body: ArraySlice<UInt8>)? {
        guard filled >= 4 else { return nil }
        var headEnd = 0
        for index in 0...(filled - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            headEnd = index + 4
            break
        }
        guard headEnd > 0 else { return nil }
        guard headEnd > 12, buffer[9] >= 48, buffer[9] <= 57 else { throw Failure(description: "not an HTTP response") }
        let status = Int(buffer[9] - 48) * 100 + Int(buffer[10] - 48) * 10 + Int(buffer[11] - 48)
        let length = contentLength(in: 0..<headEnd)
        guard filled >= headEnd + length else { return nil }
        return (status, buffer[headEnd..<headEnd + length])
    }

    /// The descriptor, for poll(2).
    var descriptor: Int32 { fd }

    /// Reads more bytes; grows the buffer when full.
    private func fill() throws(Failure) {
        if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, $0.count - filled, 0) }
            if count > 0 {
                filled += count
                return
            }
            if count < 0 && errno == EINTR { continue }
            throw Failure(description: count == 0 ? "closed by the server" : "recv: \(String(cString: strerror(errno)))")
        }
    }

    /// The Content-Length header's value in the head, 0 if absent.
    private func contentLength(in head: Range<Int>) -> Int {
        let name = Array("content-length:".utf8)
        var index = head.lowerBound
        while index + name.count < head.upperBound {
            if buffer[index] == 10 {
                var matches = true
                for offset in 0..<name.count where buffer[index + 1 + offset] | 0x20 != name[offset] {
                    matches = false
                    break
                }
                if matches {
                    var cursor = index + 1 + name.count
                    var value = 0
                    while buffer[cursor] == 32 { cursor += 1 }
                    while buffer[cursor] >= 48 && buffer[cursor] <= 57 {
                        value = value * 10 + Int(buffer[cursor] - 48)
                        cursor += 1
                    }
                    return value
                }
            }
            index += 1
        }
        return 0
    }
}
