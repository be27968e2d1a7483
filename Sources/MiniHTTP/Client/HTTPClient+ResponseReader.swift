extension HTTPClient {
    /// Reads one response: the head (bounded), then the body by `Content-Length`, chunked
    /// coding, or the close — keeping at most `maxBodyBytes` and stopping there. Interim 1xx
    /// answers before it (`100 Continue`, `103 Early Hints`) are skipped, at most
    /// `maxInterimAnswers` of them (RFC 9110 §15.2; a 100 was taken as the answer).
    struct ResponseReader {
        /// The most interim answers skipped before the final one.
        static let maxInterimAnswers = 5
        let maxHeadBytes: Int
        let maxBodyBytes: Int
        private var buffer: [UInt8] = []
        private var interimAnswers = 0
        private var head: (status: Int, headers: HTTPHeaders, length: Int?, chunked: Bool)?
        private var bodyStart = 0

        init(maxHeadBytes: Int, maxBodyBytes: Int) {
            self.maxHeadBytes = maxHeadBytes
            self.maxBodyBytes = maxBodyBytes
        }

        /// Whether enough has arrived: the whole declared body, or the bound.
        var isComplete: Bool {
            guard let head else { return false }
            let received = buffer.count - bodyStart
            if received >= maxBodyBytes { return true }
            if head.chunked { return Self.chunkedEnd(buffer[bodyStart...]) != nil }
            if let length = head.length { return received >= length }
            return false
        }

        /// Adds received bytes.
        mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
            buffer.append(contentsOf: bytes)
            while head == nil, try parseHead() {}
        }

        /// Parses the head once it has arrived; true when it was an interim answer, now dropped,
        /// so that the bytes after it are to be parsed as the next head.
        private mutating func parseHead() throws(Failure) -> Bool {
            guard let end = Self.find([13, 10, 13, 10], in: buffer) else {
                if buffer.count > maxHeadBytes { throw .malformed("head over \(maxHeadBytes) bytes") }
                return false
            }
            guard end <= maxHeadBytes else { throw .malformed("head over \(maxHeadBytes) bytes") }
            let lines = String(decoding: buffer[0..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
            let parts = (lines.first ?? "").split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].utf8.count == 3,
                  let status = Int(parts[1]), (100...599).contains(status) else {
                throw .malformed("status line \"\((lines.first ?? "").prefix(60))\"")
            }
            if (100..<200).contains(status) {
                interimAnswers += 1
                guard interimAnswers <= Self.maxInterimAnswers else { throw .malformed("more than \(Self.maxInterimAnswers) interim (1xx) answers") }
                buffer.removeFirst(end + 4)
                return true
            }
            var headers = HTTPHeaders()
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line without ':'") }
                headers.add(String(line[..<colon]), String(String(line[line.index(after: colon)...]).trimmingSpaces()))
            }
            let chunked = headers.values("Transfer-Encoding").contains { $0.lowercasedASCII().contains("chunked") }
            var length: Int?
            if !chunked, let value = headers["Content-Length"] {
                guard value.utf8.count <= 15, let parsed = Int(value), parsed >= 0 else { throw .malformed("Content-Length \(value.prefix(20))") }
                length = parsed
            }
            // 204 and 304 have no body.
            if status == 204 || status == 304 { length = 0 }
            head = (status, headers, length, chunked)
            bodyStart = end + 4
            return false
        }

        /// The response as far as it arrived; a body cut short of its declared length is an error.
        func finish() throws(Failure) -> Response {
            guard let head else { throw .malformed(buffer.isEmpty ? "closed without an answer" : "closed inside the head") }
            var body = Array(buffer[bodyStart...].prefix(maxBodyBytes))
            if head.chunked {
                if let decoded = Self.dechunk(body) { body = decoded } else if buffer.count - bodyStart < maxBodyBytes {
                    throw .malformed("closed inside a chunked body")
                }
            } else if let length = head.length {
                guard body.count >= min(length, maxBodyBytes) else { throw .malformed("closed after \(body.count) of \(length) body bytes") }
                body = Array(body.prefix(length))
            }
            return Response(status: head.status, headers: head.headers, body: body)
        }

        private static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
            guard bytes.count >= needle.count else { return nil }
            for index in 0...(bytes.count - needle.count) where bytes[index] == needle[0] && Array(bytes[index..<index + needle.count]) == needle {
                return index
            }
            return nil
        }

        /// Where a complete chunked body ends, if it has.
        private static func chunkedEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
            var index = bytes.startIndex
            while true {
                guard let lineEnd = bytes[index...].firstIndex(of: 10), lineEnd > index else { return nil }
                let sizeText = String(decoding: bytes[index..<lineEnd].prefix { $0 != 59 && $0 != 13 }, as: UTF8.self)
                guard sizeText.utf8.count <= 8, let size = Int(sizeText, radix: 16) else { return nil }
                index = lineEnd + 1
                if size == 0 { return index }
                index += size + 2
                guard index <= bytes.endIndex else { return nil }
            }
        }

        /// The data of a complete chunked body (trailers ignored).
        private static func dechunk(_ bytes: [UInt8]) -> [UInt8]? {
            var out: [UInt8] = []
            var index = 0
            while true {
                guard let lineEnd = bytes[index...].firstIndex(of: 10) else { return nil }
                let sizeText = String(decoding: bytes[index..<lineEnd].prefix { $0 != 59 && $0 != 13 }, as: UTF8.self)
                guard sizeText.utf8.count <= 8, let size = Int(sizeText, radix: 16) else { return nil }
                index = lineEnd + 1
                if size == 0 { return out }
                guard index + size <= bytes.count else { return nil }
                out += bytes[index..<index + size]
                index += size + 2
            }
        }
    }
}
