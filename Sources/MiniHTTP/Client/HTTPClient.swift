import CMiniHTTP
import Glibc

/// One HTTP/1.1 exchange over `http` or `https`, blocking the calling thread but never longer
/// than its timeouts: for threads made to wait (a notification deliverer, a CLI), never for an
/// event loop or the cooperative pool. The answer is bounded: its head, and a body read up to
/// `maxBodyBytes` (a receiver sending 10 MB costs the client nothing but the bound).
public struct HTTPClient: Sendable {
    /// Why an exchange failed, in words for a log.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not an absolute `http` or `https` URL.
        case invalidURL(String)
        /// The name did not resolve, or nothing accepted the connection.
        case connect(String)
        /// Nothing happened within the time allowed.
        case timeout(String)
        /// The TLS handshake or a record failed (certificate errors included).
        case tls(String)
        /// The peer answered something that is not HTTP/1.x, or closed early.
        case malformed(String)

        /// The explanation.
        public var description: String {
            switch self {
            case .invalidURL(let url): "not an absolute http(s) URL: \(url)"
            case .connect(let why): "connect: \(why)"
            case .timeout(let what): "timed out: \(what)"
            case .tls(let why): "TLS: \(why)"
            case .malformed(let why): "bad answer: \(why)"
            }
        }
    }

    /// What came back.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields.
        public var headers: HTTPHeaders
        /// The body, at most `maxBodyBytes` of it.
        public var body: [UInt8]
    }

    /// Seconds to connect (TLS handshake included).
    public var connectTimeout: Double = 5
    /// Seconds from the request's first byte sent to the answer's end.
    public var responseTimeout: Double = 10
    /// Largest answer head read.
    public var maxHeadBytes = 16 * 1024
    /// Most body bytes read; the rest is left unread and the connection closed.
    public var maxBodyBytes = 64 * 1024
    /// PEM CA certificates that `https` servers are checked against; nil uses the system store.
    public var caFile: String?

    /// A client with the defaults above.
    public init() {}

    /// Sends one request with `Connection: close` and reads the answer.
    public func send(_ method: String, url: String, headers: [(String, String)] = [], body: [UInt8] = []) throws(Failure) -> Response {
        let target = try Target(url)
        let connectDeadline = Syscall.monotonicNanoseconds() + UInt64(max(0.001, connectTimeout) * 1e9)
        let fd = try Self.connect(target.host, target.port, deadline: connectDeadline)
        defer { Syscall.close(fd) }
        let tls = target.secure ? try TLSClientSession(fd: fd, host: target.host, caFile: caFile, deadline: connectDeadline) : nil
        let deadline = Syscall.monotonicNanoseconds() + UInt64(max(0.001, responseTimeout) * 1e9)
        var head = "\(method) \(target.path) HTTP/1.1\r\nHost: \(target.authority)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + body
        if let tls { try tls.write(request, deadline: deadline) } else { try Self.write(fd, request, deadline: deadline) }
        var parser = ResponseReader(maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while !parser.isComplete {
            let count: Int
            if let tls { count = try tls.read(into: buffer, deadline: deadline) } else { count = try Self.read(fd, into: buffer, deadline: deadline) }
            if count == 0 { break }
            try parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return try parser.finish()
    }

    // MARK: - Sockets

    /// Waits until `fd` is ready for `events`, or throws at the deadline.
    static func poll(_ fd: Int32, events: Int16, deadline: UInt64, doing what: String) throws(Failure) {
        while true {
            let now = Syscall.monotonicNanoseconds()
            guard now < deadline else { throw .timeout(what) }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds = Int32(min((deadline - now) / 1_000_000 + 1, 60_000))
            let ready = Glibc.poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .connect("poll: \(String(cString: strerror(errno)))") }
        }
    }

    /// Connects a non-blocking, close-on-exec TCP socket to `host:port` (each resolved address in
    /// turn) by the deadline; the caller owns the descriptor. Shared with `SMTPClient`.
    static func connect(_ host: String, _ port: Int, deadline: UInt64) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else { throw .connect("cannot resolve \(host): \(String(cString: gai_strerror(status)))") }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                            info.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno))
                Syscall.close(fd)
                continue
            }
            do {
                try poll(fd, events: Int16(POLLOUT), deadline: deadline, doing: "connect to \(host):\(port)")
            } catch {
                Syscall.close(fd)
                throw error
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) == 0 && code == 0 { return fd }
            lastError = String(cString: strerror(code))
            Syscall.close(fd)
        }
        throw .connect("\(host):\(port): \(lastError)")
    }

    /// Sends all of `bytes` by the deadline; `what` names the wait in a timeout. Shared with `SMTPClient`.
    static func write(_ fd: Int32, _ bytes: [UInt8], deadline: UInt64, doing what: String = "sending the request") throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(SocketError) -> Int in try Syscall.send(fd, raw.baseAddress! + sent, raw.count - sent) }
            }
            switch result {
            case .success(let count): sent += count
            case .failure(let error):
                guard error.isWouldBlock else { throw .connect("send: \(error)") }
                try poll(fd, events: Int16(POLLOUT), deadline: deadline, doing: what)
            }
        }
    }

    /// Reads what has arrived into `buffer`, waiting for it until the deadline; 0 at the end of the
    /// stream or a reset. `what` names the wait in a timeout. Shared with `SMTPClient`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, deadline: UInt64,
                     doing what: String = "waiting for the answer") throws(Failure) -> Int {
        while true {
            do {
                return try Syscall.read(fd, buffer.baseAddress!, buffer.count)
            } catch {
                guard error.isWouldBlock else {
                    if error.isDisconnect { return 0 }
                    throw .connect("read: \(error)")
                }
                try poll(fd, events: Int16(POLLIN), deadline: deadline, doing: what)
            }
        }
    }
}
