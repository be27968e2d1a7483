extension SMTPClient {
    /// Reads SMTP replies from a byte stream (RFC 5321 §4.2): lines of three digits, `-` (more
    /// lines follow) or a space or nothing, and text; every line of a reply with the same code.
    /// Lines may end with CRLF or, leniently, LF alone. A reply over `maxReplyBytes` is refused.
    struct ReplyReader {
        /// Longest reply, all its lines and line ends together.
        let maxReplyBytes: Int
        private var buffer: [UInt8] = []

        /// A reader that refuses replies over `maxReplyBytes`.
        init(maxReplyBytes: Int) {
            self.maxReplyBytes = maxReplyBytes
        }

        /// Adds received bytes.
        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            buffer.append(contentsOf: bytes)
        }

        /// Bytes received and not yet returned in a reply.
        var bufferedByteCount: Int { buffer.count }

        /// The next whole reply, nil when more bytes are needed; throws when the bytes cannot be a
        /// reply or one runs over `maxReplyBytes`.
        mutating func next() throws(Failure) -> SMTPReply? {
            var code: Int?
            var lines: [String] = []
            var start = 0
            while start < buffer.count, let newline = buffer[start...].firstIndex(of: 10) {
                guard newline < maxReplyBytes else { throw .malformed("reply over \(maxReplyBytes) bytes") }
                var end = newline
                if end > start && buffer[end - 1] == 13 { end -= 1 }
                let line = buffer[start..<end]
                start = newline + 1
                guard line.count >= 3, line.prefix(3).allSatisfy({ (48...57).contains($0) }),
                      line.count == 3 || line[line.startIndex + 3] == 32 || line[line.startIndex + 3] == 45 else {
                    throw .malformed("reply line \"\(String(decoding: line.prefix(60), as: UTF8.self))\"")
                }
                let lineCode = line.prefix(3).reduce(0) { $0 * 10 + Int($1 - 48) }
                guard (200...599).contains(lineCode) else { throw .malformed("reply code \(lineCode)") }
                if let code, code != lineCode { throw .malformed("reply lines with codes \(code) and \(lineCode)") }
                code = lineCode
                lines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
                if line.count == 3 || line[line.startIndex + 3] == 32 {
                    buffer.removeFirst(start)
                    return SMTPReply(code: lineCode, lines: lines)
                }
            }
            guard buffer.count <= maxReplyBytes else { throw .malformed("reply over \(maxReplyBytes) bytes") }
            return nil
        }
    }
}
