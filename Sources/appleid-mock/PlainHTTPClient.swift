import Glibc

/// One HTTP/1.1 request over plain TCP with an overall deadline, for the CLI's commands that
/// talk to a running mock. The product links no
/// URLSession (FoundationNetworking drags in libcurl and GnuTLS, megabytes of resident memory
/// in every mock that CI starts), and a CLI talking to a local mock needs no more than this.
struct PlainHTTPClient {
    /// Where the mock listens.
    let host: String
    let port: Int
    /// Seconds the whole request may take, connecting included.
    var timeout: Int = 30

    /// Splits `http://host[:port][/base]` into host and port; nil for anything else.
    init?(url: String) {
        guard url.hasPrefix("http://") else { return nil }
        var rest = url.dropFirst("http://".count)
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var hostPart = Substring(rest)
        var port = 80
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else { return nil }
            let after = hostPart[hostPart.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()), (1...65535).contains(value) else { return nil }
                port = value
            }
            hostPart = hostPart[hostPart.index(after: hostPart.startIndex)..<close]
        } else if let colon = hostPart.lastIndex(of: ":") {
            guard let value = Int(hostPart[hostPart.index(after: colon)...]), (1...65535).contains(value) else { return nil }
            port = value
            hostPart = hostPart[..<colon]
        }
        guard !hostPart.isEmpty else { return nil }
        self.host = String(hostPart)
        self.port = port
    }

    /// Failures, worded for the CLI's error line.
    struct Failure: Error {
        let message: String
    }

    /// Largest answer head and body read; a server sending more is refused, not buffered.
    static let maxHeadBytes = 64 * 1024
    static let maxBodyBytes = 16 * 1024 * 1024

    /// POSTs `body` to `path` and returns the status and body of the answer.
    func post(path: String, contentType: String, body: [UInt8]) throws(Failure) -> (status: Int, body: [UInt8]) {
        try request("POST", path: path, contentType: contentType, body: body)
    }

    /// Sends one request and reads one answer, framed by its `Content-Length` (or the close),
    /// all within `timeout` seconds from the start: a server that trickles or never stops
    /// sending cannot hold the CLI (probe finding F16).
    func request(_ method: String, path: String, contentType: String? = nil, body: [UInt8] = []) throws(Failure) -> (status: Int, body: [UInt8]) {
        let deadline = Self.now() + Double(timeout)
        let fd = try connect(deadline: deadline)
        defer { close(fd) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        try send(fd, Array(head.utf8) + body, deadline: deadline)
        var received: [UInt8] = []
        var headEnd: Int?
        var expected: Int?
        var status = 0
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            if let headEnd, let expected, received.count - headEnd >= expected { break }
            try wait(fd, for: Int16(POLLIN), deadline: deadline)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure(message: "read failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            received.append(contentsOf: chunk[0..<count])
            if headEnd == nil {
                guard let end = Self.headEnd(received) else {
                    if received.count > Self.maxHeadBytes { throw Failure(message: "the answer's head is over \(Self.maxHeadBytes) bytes") }
                    continue
                }
                headEnd = end + 4
                (status, expected) = try Self.parseHead(received[..<end])
                if let expected, expected > Self.maxBodyBytes { throw Failure(message: "the answer's body is over \(Self.maxBodyBytes) bytes") }
            }
            if let headEnd, received.count - headEnd > Self.maxBodyBytes { throw Failure(message: "the answer's body is over \(Self.maxBodyBytes) bytes") }
        }
        guard let headEnd else { throw Failure(message: "the server closed before a complete answer") }
        let bodyBytes = received[headEnd...]
        if let expected {
            guard bodyBytes.count >= expected else { throw Failure(message: "the server closed before the whole answer") }
            return (status, Array(bodyBytes.prefix(expected)))
        }
        return (status, Array(bodyBytes))
    }

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Waits until `fd` is ready for `events`, or throws once the deadline has passed.
    private func wait(_ fd: Int32, for events: Int16, deadline: Double) throws(Failure) {
        while true {
            let remaining = deadline - Self.now()
            guard remaining > 0 else { throw Failure(message: "no complete answer within \(timeout) s") }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw Failure(message: "poll failed: \(String(cString: strerror(errno)))") }
        }
    }

    private func connect(deadline: Double) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw Failure(message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                            info.pointee.ai_protocol)
            guard fd >= 0 else { lastError = errno; continue }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            if errno == EINPROGRESS {
                do {
                    try wait(fd, for: Int16(POLLOUT), deadline: deadline)
                } catch {
                    close(fd)
                    throw error
                }
                var code: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) == 0 && code == 0 { return fd }
                lastError = code
            } else {
                lastError = errno
            }
            close(fd)
        }
        throw Failure(message: "cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))")
    }

    private func send(_ fd: Int32, _ bytes: [UInt8], deadline: Double) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            try wait(fd, for: Int16(POLLOUT), deadline: deadline)
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else { throw Failure(message: "write failed: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// Index of the CRLFCRLF ending the head, if it has arrived.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The status code and `Content-Length` (nil: read to the close) of an answer head.
    private static func parseHead(_ head: ArraySlice<UInt8>) throws(Failure) -> (Int, Int?) {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = (lines.first ?? "").split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]), (100...599).contains(status) else {
            throw Failure(message: "not an HTTP answer: \((lines.first ?? "").prefix(80))")
        }
        var length: Int?
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].lowercased()
            if name == "transfer-encoding" { throw Failure(message: "chunked answers are not supported") }
            if name == "content-length" {
                let digits = parts[1].trimmingPrefix(" ")
                guard !digits.isEmpty, digits.utf8.count <= 12, digits.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(digits) else {
                    throw Failure(message: "invalid Content-Length in the answer")
                }
                length = value
            }
        }
        return (status, length)
    }
}
