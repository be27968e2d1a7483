import Glibc
import MiniHTTP

/// A blocking TCP client for tests: writes exact bytes, reads exact responses. No URLSession,
/// no retries, no normalisation. Reads give up after `timeout` seconds so a test never hangs.
public final class RawHTTPClient {
    /// Errors the client reports.
    public enum Failure: Error, CustomStringConvertible {
        /// A system call failed.
        case system(String, Int32)
        /// The peer closed before a full response arrived; what had arrived.
        case closed(received: [UInt8])
        /// No byte arrived within the timeout.
        case timedOut(received: [UInt8])
        /// The bytes are not an HTTP response.
        case malformed(String)

        /// Explanation.
        public var description: String {
            switch self {
            case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
            case .closed(let received): "connection closed after \(received.count) bytes: \(String(decoding: received, as: UTF8.self))"
            case .timedOut(let received): "timed out after \(received.count) bytes"
            case .malformed(let why): "malformed response: \(why)"
            }
        }
    }

    /// The socket descriptor.
    public let fd: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    /// Connects to `host:port` (IPv4 or IPv6 literal).
    public init(host: String = "127.0.0.1", port: Int, timeout: Double = 10) throws {
        let isV6 = host.contains(":")
        fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure.system("socket", errno) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            throw Failure.system("connect", code)
        }
    }

    deinit { if !closed { Glibc.close(fd) } }

    /// Tries to connect to `host:port` and says how it went: nil when a connection was made
    /// (and closed again), else the failure (`.system("connect", ECONNREFUSED)` once a server
    /// has stopped listening).
    public static func connectionFailure(host: String = "127.0.0.1", port: Int, timeout: Double = 2) -> Failure? {
        do {
            _ = try RawHTTPClient(host: host, port: port, timeout: timeout)
            return nil
        } catch let failure as Failure {
            return failure
        } catch {
            return .malformed("\(error)")
        }
    }

    /// Sends all of `bytes`.
    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure.system("send", errno)
            }
            sent += count
        }
    }

    /// Sends a string's UTF-8 bytes.
    public func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends a request built from parts; adds `Host` and, for a body, `Content-Length`.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
    }

    /// Sends a request and reads its response.
    public func roundTrip(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> RawHTTPResponse {
        try request(method, target, headers: headers, body: body)
        return try readResponse(headOnly: method == "HEAD")
    }

    /// Closes the sending side (a half-close); reading still works.
    public func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the socket.
    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    /// Reads one response. Interim 1xx responses are returned like any other.
    public func readResponse(headOnly: Bool = false) throws -> RawHTTPResponse {
        let headEnd = try readUntil { bytes in Self.find(Array("\r\n\r\n".utf8), in: bytes).map { $0 + 4 } }
        let head = Array(buffer[0..<headEnd])
        let lines = String(decoding: head.dropLast(4), as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw Failure.malformed(lines[0])
        }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw Failure.malformed(line) }
            headers.add(String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: " "))
        }
        var total = headEnd
        if !headOnly && !(100..<200).contains(status) && status != 204 && status != 304 {
            if let length = headers["Content-Length"].flatMap({ Int($0) }) {
                total = try readUntil { $0.count >= headEnd + length ? headEnd + length : nil }
            } else {
                total = try readToEnd()
            }
        }
        let raw = Array(buffer[0..<total])
        buffer.removeFirst(total)
        return RawHTTPResponse(status: status, reason: statusParts.count > 2 ? String(statusParts[2]) : "",
                               headers: headers, body: Array(raw[headEnd...]), raw: raw)
    }

    /// Reads until the peer closes; returns everything unread.
    public func readAll() throws -> [UInt8] {
        let end = try readToEnd()
        let bytes = Array(buffer[0..<end])
        buffer.removeAll()
        return bytes
    }

    /// True when the peer closes the connection (a read returns end of stream) with no more
    /// data; false when data arrives instead.
    public func waitForClose() throws -> Bool {
        if !buffer.isEmpty { return false }
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, 0)
            if count == 0 { return true }
            if count > 0 {
                buffer.append(byte)
                return false
            }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return true }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.timedOut(received: buffer) }
            throw Failure.system("recv", errno)
        }
    }

    /// How a connection ended for `readUntilEnd`.
    public enum End: Equatable, Sendable {
        /// The peer closed it (a read returned end of stream).
        case closed
        /// The peer reset it (`ECONNRESET`).
        case reset
        /// Nothing more came within the timeout; the connection is still open.
        case timedOut
    }

    /// Reads until the connection ends or goes quiet for the timeout; returns every byte unread
    /// and how it ended. Unlike `readAll`, tells a reset from a close.
    public func readUntilEnd() -> (bytes: [UInt8], end: End) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var end = End.closed
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { end = errno == ECONNRESET ? .reset : (errno == EAGAIN || errno == EWOULDBLOCK) ? .timedOut : .closed }
            break
        }
        let bytes = buffer
        buffer.removeAll()
        return (bytes, end)
    }

    /// Bytes already waiting on the socket, without blocking (empty when none have arrived).
    public func availableNow() -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return count > 0 ? Array(chunk[0..<count]) : []
    }

    private func readToEnd() throws -> Int {
        while true {
            if try !fill() { return buffer.count }
        }
    }

    private func readUntil(_ complete: ([UInt8]) -> Int?) throws -> Int {
        while true {
            if let end = complete(buffer) { return end }
            guard try fill() else { throw Failure.closed(received: buffer) }
        }
    }

    /// Reads once; false at end of stream.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count == 0 { return false }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return false }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.timedOut(received: buffer) }
            throw Failure.system("recv", errno)
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var slice = Substring(self)
        while slice.first == set { slice.removeFirst() }
        while slice.last == set { slice.removeLast() }
        return String(slice)
    }
}
