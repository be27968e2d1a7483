import Glibc

/// One blocking HTTP/1.1 request over plain TCP, for the CLI's `sign-in`. The product links no
/// URLSession (FoundationNetworking drags in libcurl and GnuTLS, megabytes of resident memory
/// in every mock that CI starts), and a CLI talking to a local mock needs no more than this.
struct PlainHTTPClient {
    /// Where the mock listens.
    let host: String
    let port: Int
    /// Seconds to wait for each read or write.
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

    /// POSTs `body` to `path` and returns the status and body of the answer.
    func post(path: String, contentType: String, body: [UInt8]) throws(Failure) -> (status: Int, body: [UInt8]) {
        let fd = try connect()
        defer { close(fd) }
        let head = "POST \(path) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
            + "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        try send(fd, Array(head.utf8) + body)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw Failure(message: errno == EAGAIN ? "no answer within \(timeout) s" : "read failed: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            received.append(contentsOf: chunk[0..<count])
        }
        return try parse(received)
    }

    private func connect() throws(Failure) -> Int32 {
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
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else { lastError = errno; continue }
            var limit = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            lastError = errno
            close(fd)
        }
        throw Failure(message: "cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))")
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(message: "write failed: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// Reads the status line and the body the server framed with Content-Length (or EOF).
    private func parse(_ bytes: [UInt8]) throws(Failure) -> (status: Int, body: [UInt8]) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw Failure(message: "the server closed before a complete answer")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw Failure(message: "not an HTTP answer: \(lines[0])")
        }
        var body = Array(bytes[(end + 4)...])
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length",
               let length = Int(parts[1].trimmingPrefix(" ")), length <= body.count {
                body = Array(body[..<length])
            }
        }
        return (status, body)
    }
}
