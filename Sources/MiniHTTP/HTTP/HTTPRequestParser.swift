/// An incremental HTTP/1.x request parser: bytes in, requests out (RFC 9112).
///
/// Pure and bounded: it never reads past `HTTPLimits`, never re-scans bytes it has already
/// examined, and keeps no more than one request's head plus its body in memory. Pipelined
/// requests come out one `next()` at a time.
public struct HTTPRequestParser: Sendable {
    private struct Head: Sendable {
        var method: HTTPMethod
        var target: String
        var minorVersion: Int
        var headers: HTTPHeaders
        var expectsContinue: Bool
    }

    /// Where a chunked body stands. `scanned` counts the bytes of the current line, from
    /// `start`, already judged by `scanLine`, so a line arriving in pieces is scanned once.
    private enum ChunkState: Sendable {
        case sizeLine(scanned: Int)
        case data(remaining: Int)
        case dataEnd
        case trailers(bytes: Int, scanned: Int)
    }

    private enum Phase: Sendable {
        case head(scanned: Int)
        case fixedBody(Head, length: Int)
        case chunked(Head, ChunkState, body: [UInt8])
    }

    /// The limits this parser enforces.
    public let limits: HTTPLimits
    private var storage: [UInt8] = []
    private var start = 0
    private var phase: Phase = .head(scanned: 0)

    /// A parser with the given limits.
    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthIt()
        storage.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Bytes received but not yet consumed by a returned request.
    public var bufferedByteCount: Int { storage.count - start }

    /// True while part of a request has arrived (its first bytes, its head, or part of its body).
    public var hasPartialRequest: Bool {
        if case .head = phase { return bufferedByteCount > 0 }
        return true
    }

    /// True while the request line and headers of the next request are still arriving.
    public var isReadingHead: Bool {
        if case .head = phase { return true }
        return false
    }

    /// Body bytes the request being received will hold, as far as its framing has declared them:
    /// its Content-Length once the head is parsed; for chunked framing, the bytes decoded so far
    /// plus the rest of the chunk being read. 0 while a head is arriving. A promise, not memory:
    /// the server only checks it before answering `100 Continue`.
    public var pendingBodyBytes: Int {
        switch phase {
        case .head: 0
        case .fixedBody(_, let length): length
        case .chunked(_, .data(let remaining), let body): body.count + remaining
        case .chunked(_, _, let body): body.count
        }
    }

    /// Body bytes of the request being received that are held in memory now: what arrived of a
    /// Content-Length body (up to its length), or a chunked body's decoded bytes plus the
    /// undecoded bytes buffered after them. 0 while a head is arriving. The server counts this
    /// against its shared body budget as it grows (declared lengths cost nothing).
    public var bufferedBodyBytes: Int {
        switch phase {
        case .head: 0
        case .fixedBody(_, let length): min(bufferedByteCount, length)
        case .chunked(_, _, let body): body.count + bufferedByteCount
        }
    }

    /// True when the head is complete, asked for `Expect: 100-continue`, and the body is pending.
    public var isAwaitingContinue: Bool {
        switch phase {
        case .head: false
        case .fixedBody(let head, let length): head.expectsContinue && bufferedByteCount < length
        case .chunked(let head, let state, let body):
            if case .sizeLine = state { head.expectsContinue && body.isEmpty && bufferedByteCount == 0 } else { false }
        }
    }

    /// Returns the next complete request, nil when more bytes are needed, or throws when the
    /// input cannot be a valid request (the connection must then be answered and closed).
    public mutating func next() throws(HTTPParseError) -> HTTPRequest? {
        while true {
            switch phase {
            case .head(let scanned):
                guard let head = try parseHead(scanned: scanned) else { return nil }
                if let request = head { return request }
            case .fixedBody(let head, let length):
                guard bufferedByteCount >= length else { return nil }
                let body = Array(storage[start..<start + length])
                start += length
                phase = .head(scanned: start)
                return request(head, body)
            case .chunked(let head, let state, let body):
                phase = .head(scanned: 0)  // release `phase`'s reference so appends do not copy
                guard let complete = try decodeChunks(head, state, body) else { return nil }
                phase = .head(scanned: start)
                return request(head, complete)
            }
        }
    }

    // MARK: - Head

    /// nil: need more bytes. `.some(nil)`: the head was consumed and a body phase began.
    /// `.some(request)`: a request without a body.
    private mutating func parseHead(scanned: Int) throws(HTTPParseError) -> HTTPRequest?? {
        // RFC 9112 §2.2: ignore empty lines (CRLF) before the request line.
        while bufferedByteCount >= 2 && storage[start] == 13 && storage[start + 1] == 10 { start += 2 }
        // Every LF must end a CRLF: a bare LF is rejected as soon as it arrives (RFC 9112 §2.2), so
        // a head that uses LF alone is answered at once instead of waiting for a CRLFCRLF.
        var index = max(scanned, start)
        let end = storage.count
        var terminator: Int?
        while index < end {
            guard storage[index] == 10 else { index += 1; continue }
            guard index > start, storage[index - 1] == 13 else { throw .malformed("bare LF in head") }
            if index - start >= 3 && storage[index - 2] == 10 && storage[index - 3] == 13 {
                terminator = index - 3
                break
            }
            index += 1
        }
        guard let terminator else {
            if bufferedByteCount > limits.maxHeadBytes { throw .headTooLarge }
            phase = .head(scanned: max(end, start))
            return nil
        }
        let headEnd = terminator + 4
        if headEnd - start > limits.maxHeadBytes { throw .headTooLarge }
        let head = try Self.parseHeadBytes(storage[start..<terminator], limits: limits)
        start = headEnd
        let framing = try Self.framing(of: head, limits: limits)
        switch framing {
        case .none:
            phase = .head(scanned: start)
            return .some(request(head, []))
        case .length(let length):
            phase = .fixedBody(head, length: length)
            return .some(nil)
        case .chunked:
            phase = .chunked(head, .sizeLine(scanned: 0), body: [])
            return .some(nil)
        }
    }

    private enum Framing { case none, length(Int), chunked }

    private static func framing(of head: Head, limits: HTTPLimits) throws(HTTPParseError) -> Framing {
        let encodings = head.headers.values("Transfer-Encoding")
        let lengths = head.headers.values("Content-Length")
        if !encodings.isEmpty {
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 request is faulty framing; a 1.0
            // intermediary may have passed the body through unchunked, so the stream is unusable.
            if head.minorVersion == 0 { throw .malformed("Transfer-Encoding in HTTP/1.0 request") }
            if !lengths.isEmpty { throw .conflictingFraming }
            let codings = encodings.flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces().lowercasedASCII() }
            guard codings == ["chunked"] else { throw .unsupportedTransferEncoding }
            return .chunked
        }
        guard !lengths.isEmpty else { return .none }
        var value: Int?
        for item in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = item.trimmingSpaces()
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else {
                throw .malformed("invalid Content-Length")
            }
            guard digits.utf8.count <= 15, let parsed = Int(digits) else { throw .bodyTooLarge }
            if let value, value != parsed { throw .malformed("conflicting Content-Length values") }
            value = parsed
        }
        let length = value ?? 0
        if length > limits.maxBodyBytes { throw .bodyTooLarge }
        return length == 0 ? .none : .length(length)
    }

    private static func parseHeadBytes(_ bytes: ArraySlice<UInt8>, limits: HTTPLimits) throws(HTTPParseError) -> Head {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 13 {
                guard index + 1 < bytes.endIndex, bytes[index + 1] == 10 else { throw .malformed("bare CR in head") }
                lines.append(bytes[lineStart..<index])
                index += 2
                lineStart = index
                continue
            }
            if bytes[index] == 10 { throw .malformed("bare LF in head") }
            index += 1
        }
        lines.append(bytes[lineStart..<bytes.endIndex])
        guard let requestLine = lines.first else { throw .malformed("empty request") }
        if lines.count - 1 > limits.maxHeaderCount { throw .tooManyHeaders }

        let parts = requestLine.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("malformed request line") }
        guard !parts[0].isEmpty, parts[0].allSatisfy(HTTPSyntax.isTokenByte) else { throw .malformed("invalid method") }
        let target = parts[1]
        guard !target.isEmpty, target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw .malformed("invalid request target")
        }
        let minor: Int
        switch Array(parts[2]) {
        case Array("HTTP/1.1".utf8): minor = 1
        case Array("HTTP/1.0".utf8): minor = 0
        case let version where version.count == 8 && version.starts(with: "HTTP/".utf8)
            && (48...57).contains(version[5]) && version[6] == UInt8(ascii: ".") && (48...57).contains(version[7]):
            throw .unsupportedVersion
        default: throw .malformed("invalid HTTP version")
        }

        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .malformed("header line without ':'") }
            let name = line[line.startIndex..<colon]
            // RFC 9112 §5.1: no whitespace between name and colon; §5.2: obs-fold is rejected.
            guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenByte) else { throw .malformed("invalid header name") }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 32 || first == 9 { value.removeFirst() }
            while let last = value.last, last == 32 || last == 9 { value.removeLast() }
            guard value.allSatisfy(HTTPSyntax.isFieldValueByte) else { throw .malformed("invalid header value") }
            headers.add(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
        if minor == 1 && headers.values("Host").count != 1 { throw .malformed("HTTP/1.1 request needs exactly one Host header") }
        let expectsContinue: Bool
        if let expect = headers["Expect"] {
            guard expect.lowercasedASCII() == "100-continue" else { throw .malformed("unsupported Expect") }
            expectsContinue = minor == 1
        } else {
            expectsContinue = false
        }
        return Head(method: HTTPMethod(rawValue: String(decoding: parts[0], as: UTF8.self)),
                    target: String(decoding: target, as: UTF8.self), minorVersion: minor,
                    headers: headers, expectsContinue: expectsContinue)
    }

    // MARK: - Chunked body (RFC 9112 §7.1)

    /// Decodes as far as the buffer allows; nil means more bytes are needed (state saved in `phase`).
    private mutating func decodeChunks(_ head: Head, _ initial: ChunkState, _ initialBody: [UInt8]) throws(HTTPParseError) -> [UInt8]? {
        var state = initial
        var body = initialBody
        while true {
            switch state {
            case .sizeLine(let scanned):
                let scan = try scanLine(from: scanned, limit: limits.maxChunkLineBytes, tooLong: .malformed("chunk size line too long"), in: "chunk size line")
                guard let lineEnd = scan.end else {
                    phase = .chunked(head, .sizeLine(scanned: scan.scanned), body: body)
                    return nil
                }
                let size = try Self.chunkSize(storage[start..<lineEnd])
                start = lineEnd + 2
                if size == 0 {
                    state = .trailers(bytes: 0, scanned: 0)
                } else {
                    if size > limits.maxBodyBytes - body.count { throw .bodyTooLarge }
                    state = .data(remaining: size)
                }
            case .data(let remaining):
                let available = min(remaining, bufferedByteCount)
                body.append(contentsOf: storage[start..<start + available])
                start += available
                if available < remaining {
                    phase = .chunked(head, .data(remaining: remaining - available), body: body)
                    return nil
                }
                state = .dataEnd
            case .dataEnd:
                guard bufferedByteCount >= 2 else {
                    phase = .chunked(head, state, body: body)
                    return nil
                }
                guard storage[start] == 13 && storage[start + 1] == 10 else { throw .malformed("chunk data not followed by CRLF") }
                start += 2
                state = .sizeLine(scanned: 0)
            case .trailers(let seen, let scanned):
                // The trailer section, each line with its CRLF, fits in `maxHeadBytes` like a head.
                let scan = try scanLine(from: scanned, limit: limits.maxHeadBytes - seen - 2, tooLong: .headTooLarge, in: "trailer section")
                guard let lineEnd = scan.end else {
                    phase = .chunked(head, .trailers(bytes: seen, scanned: scan.scanned), body: body)
                    return nil
                }
                let length = lineEnd - start
                if length == 0 {
                    start = lineEnd + 2
                    return body
                }
                try Self.validateTrailerField(storage[start..<lineEnd])
                start = lineEnd + 2
                state = .trailers(bytes: seen + length + 2, scanned: 0)
            }
        }
    }

    /// Looks for the end of the line starting at `start`, resuming after the `scanned` bytes of
    /// it judged before. `end` is the index of its CR once the CRLF has arrived, else nil, with
    /// `scanned` saying where to resume. Bytes are judged in order, each by the bytes before it
    /// alone, so the verdict is the same however the stream was cut into reads. Throws at the
    /// first bare CR, bare LF or control byte other than HTAB (none may appear in a chunk line or
    /// a field line: RFC 9112 §2.2, §7.1.1, §7.1.2; RFC 9110 §5.5), or `tooLong` once the line's
    /// content would pass `limit` bytes.
    private func scanLine(from scanned: Int, limit: Int, tooLong: HTTPParseError, in what: String) throws(HTTPParseError) -> (end: Int?, scanned: Int) {
        var index = start + scanned
        let end = storage.count
        while index < end {
            let byte = storage[index]
            if byte == 13 {
                guard index + 1 < end else { return (nil, index - start) }
                guard storage[index + 1] == 10 else { throw .malformed("bare CR in \(what)") }
                return (index, index - start)
            }
            if index - start >= limit { throw tooLong }
            if byte == 10 { throw .malformed("bare LF in \(what)") }
            if byte != 9 && (byte < 32 || byte == 127) { throw .malformed("control character in \(what)") }
            index += 1
        }
        return (nil, index - start)
    }

    /// Parses a chunk-size line without its CRLF and returns the size (RFC 9112 §7.1, §7.1.1):
    ///
    ///     chunk-size [ chunk-ext ]
    ///     chunk-ext     = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
    ///     chunk-ext-name = token
    ///     chunk-ext-val  = token / quoted-string
    ///
    /// Extensions are checked, then ignored.
    private static func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var index = line.startIndex
        while index < line.endIndex && isHexDigit(line[index]) { index += 1 }
        let digits = line[line.startIndex..<index]
        // RFC 9112 §7.1: chunk-size is 1*HEXDIG; only whitespace before a `;` (BWS) may follow it.
        let afterSpace = skipWhitespace(line, from: index)
        guard !digits.isEmpty, index == line.endIndex || (afterSpace < line.endIndex && line[afterSpace] == UInt8(ascii: ";")) else {
            throw .malformed("invalid chunk size")
        }
        guard Self.isValidChunkExtensions(line[index...]) else { throw .malformed("invalid chunk extension") }
        guard digits.count <= 8, let size = Int(String(decoding: digits, as: UTF8.self), radix: 16) else {
            throw .bodyTooLarge
        }
        return size
    }

    /// True when `text` is `*( BWS ";" BWS token [ BWS "=" BWS ( token / quoted-string ) ] )`.
    private static func isValidChunkExtensions(_ text: ArraySlice<UInt8>) -> Bool {
        var index = text.startIndex
        while index < text.endIndex {
            index = skipWhitespace(text, from: index)
            guard index < text.endIndex, text[index] == UInt8(ascii: ";") else { return false }
            let nameStart = skipWhitespace(text, from: index + 1)
            index = skipToken(text, from: nameStart)
            guard index > nameStart else { return false }
            let beforeSpace = index
            index = skipWhitespace(text, from: index)
            guard index < text.endIndex, text[index] == UInt8(ascii: "=") else {
                // No value: the whitespace, if any, belongs to the next `BWS ";"`.
                index = beforeSpace
                continue
            }
            index = skipWhitespace(text, from: index + 1)
            guard index < text.endIndex else { return false }
            if text[index] == UInt8(ascii: "\"") {
                guard let end = quotedStringEnd(text, from: index) else { return false }
                index = end
            } else {
                let valueStart = index
                index = skipToken(text, from: index)
                guard index > valueStart else { return false }
            }
        }
        return true
    }

    /// The index after the quoted-string opening at `from`, or nil when it is malformed
    /// (RFC 9110 §5.6.4: qdtext is HTAB, SP, VCHAR except `"` and `\`, or obs-text;
    /// a quoted-pair is `\` and HTAB, SP, VCHAR or obs-text).
    private static func quotedStringEnd(_ text: ArraySlice<UInt8>, from: Int) -> Int? {
        var index = from + 1
        while index < text.endIndex {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "\""): return index + 1
            case UInt8(ascii: "\\"):
                guard index + 1 < text.endIndex, HTTPSyntax.isFieldValueByte(text[index + 1]) else { return nil }
                index += 2
            default:
                guard HTTPSyntax.isFieldValueByte(byte) else { return nil }
                index += 1
            }
        }
        return nil
    }

    /// Checks one trailer line as a field line (RFC 9112 §7.1.2, §5): a token, `:`, a field
    /// value. The line scan already refused CR, LF and other controls; no obs-fold (§5.2).
    private static func validateTrailerField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
              colon > line.startIndex, line[line.startIndex..<colon].allSatisfy(HTTPSyntax.isTokenByte),
              line[(colon + 1)...].allSatisfy(HTTPSyntax.isFieldValueByte) else {
            throw .malformed("invalid trailer field")
        }
    }

    private static func skipWhitespace(_ text: ArraySlice<UInt8>, from: Int) -> Int {
        var index = from
        while index < text.endIndex && (text[index] == 32 || text[index] == 9) { index += 1 }
        return index
    }

    private static func skipToken(_ text: ArraySlice<UInt8>, from: Int) -> Int {
        var index = from
        while index < text.endIndex && HTTPSyntax.isTokenByte(text[index]) { index += 1 }
        return index
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    // MARK: - Buffer

    private func request(_ head: Head, _ body: [UInt8]) -> HTTPRequest {
        HTTPRequest(method: head.method, target: head.target, minorVersion: head.minorVersion, headers: head.headers, body: body)
    }

    private mutating func compactIfWorthIt() {
        if start == storage.count {
            storage.removeAll(keepingCapacity: true)
            if case .head = phase { phase = .head(scanned: 0) }
            start = 0
        } else if start > 4096 && start * 2 > storage.count {
            storage.removeFirst(start)
            if case .head(let scanned) = phase { phase = .head(scanned: max(0, scanned - start)) }
            start = 0
        }
    }
}
