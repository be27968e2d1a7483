import FoundationEssentials

/// What a person reads of a message (RFC 5322 and MIME, RFC 2045–2047): its header fields
/// unfolded, the decoded subject, and the first text and HTML parts, decoded from base64 or
/// quoted-printable. Read from a received message's bytes when the mailbox is asked, bounded
/// throughout: at most `maxHeaderFields` fields, parts nested `maxDepth` deep, and the message's
/// own size. A part it cannot find is left out.
struct MailContent: Sendable, Equatable {
    static let maxHeaderFields = 200
    static let maxDepth = 4

    /// Header fields in order, unfolded, values as sent (encoded words left as they are).
    var headers: [(name: String, value: String)] = []
    /// `Subject:` with encoded words decoded.
    var subject: String?
    /// The first `text/plain` part, decoded.
    var text: String?
    /// The first `text/html` part, decoded.
    var html: String?

    static func == (left: MailContent, right: MailContent) -> Bool {
        left.headers.elementsEqual(right.headers) { $0 == $1 } && left.subject == right.subject && left.text == right.text && left.html == right.html
    }

    /// The content of `message`.
    init(_ message: [UInt8]) {
        let (fields, body) = Self.split(message[...])
        headers = fields
        subject = Self.field("subject", in: fields).map(Self.decodeWords)
        collect(fields, body, depth: 0)
    }

    /// The value of the first field `name` (any case).
    static func field(_ name: String, in fields: [(name: String, value: String)]) -> String? {
        fields.first { $0.name.lowercased() == name }?.value
    }

    // MARK: - Structure

    /// Header fields and body of an entity: split at the first empty line.
    static func split(_ bytes: ArraySlice<UInt8>) -> ([(name: String, value: String)], ArraySlice<UInt8>) {
        var fields: [(name: String, value: String)] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let lineEnd = bytes[index...].firstIndex(of: 10) ?? bytes.endIndex
            var line = bytes[index..<lineEnd]
            if line.last == 13 { line = line.dropLast() }
            index = lineEnd < bytes.endIndex ? lineEnd + 1 : lineEnd
            if line.isEmpty { return (fields, bytes[index...]) }
            if line.first == 32 || line.first == 9 {
                // A folded continuation of the field before.
                if !fields.isEmpty { fields[fields.count - 1].value += " " + Self.text(line).trimmedSpace }
                continue
            }
            guard fields.count < maxHeaderFields, let colon = line.firstIndex(of: 58) else { continue }
            fields.append((Self.text(line[..<colon]).trimmedSpace,
                           Self.text(line[(colon + 1)...]).trimmedSpace))
        }
        return (fields, bytes[bytes.endIndex...])
    }

    /// Finds the first text and HTML parts of an entity.
    private mutating func collect(_ fields: [(name: String, value: String)], _ body: ArraySlice<UInt8>, depth: Int) {
        let (type, parameters) = Self.contentType(Self.field("content-type", in: fields))
        let disposition = Self.field("content-disposition", in: fields)?.lowercased() ?? ""
        if type.hasPrefix("multipart/") {
            guard depth < Self.maxDepth, let boundary = parameters["boundary"], !boundary.isEmpty else { return }
            for part in Self.parts(of: body, boundary: boundary) {
                let (partFields, partBody) = Self.split(part)
                collect(partFields, partBody, depth: depth + 1)
                if text != nil && html != nil { return }
            }
            return
        }
        guard !disposition.hasPrefix("attachment") else { return }
        let encoding = Self.field("content-transfer-encoding", in: fields)?.lowercased().trimmedSpace ?? ""
        let charset = parameters["charset"]?.lowercased() ?? "us-ascii"
        if type == "text/plain" && text == nil {
            text = Self.decode(body, encoding: encoding, charset: charset)
        } else if type == "text/html" && html == nil {
            html = Self.decode(body, encoding: encoding, charset: charset)
        }
    }

    /// The parts between `--boundary` lines, up to `--boundary--`.
    static func parts(of body: ArraySlice<UInt8>, boundary: String) -> [ArraySlice<UInt8>] {
        let delimiter = Array("--\(boundary)".utf8)
        var parts: [ArraySlice<UInt8>] = []
        var partStart: Int?
        var index = body.startIndex
        while index < body.endIndex && parts.count < 100 {
            let lineEnd = body[index...].firstIndex(of: 10) ?? body.endIndex
            var line = body[index..<lineEnd]
            if line.last == 13 { line = line.dropLast() }
            // The delimiter, then nothing but `--` (the close) or spaces: `--b2` is not `--b`'s.
            if line.starts(with: delimiter),
               case let rest = line.dropFirst(delimiter.count),
               rest.starts(with: [45, 45]) || rest.allSatisfy({ $0 == 32 || $0 == 9 }) {
                if let start = partStart {
                    // The part ends before the CRLF that precedes the delimiter line.
                    var end = index
                    if end > start && body[end - 1] == 10 { end -= 1 }
                    if end > start && body[end - 1] == 13 { end -= 1 }
                    parts.append(body[start..<max(start, end)])
                }
                if rest.starts(with: [45, 45]) { return parts }
                partStart = lineEnd < body.endIndex ? lineEnd + 1 : lineEnd
            }
            index = lineEnd < body.endIndex ? lineEnd + 1 : lineEnd
        }
        return parts
    }

    /// `type/subtype` lower-cased and the parameters (names lower-cased, quotes removed).
    static func contentType(_ value: String?) -> (String, [String: String]) {
        guard let value else { return ("text/plain", [:]) }
        let pieces = value.split(separator: ";", omittingEmptySubsequences: false)
        let type = pieces.first.map { $0.trimmedSpace.lowercased() } ?? "text/plain"
        var parameters: [String: String] = [:]
        for piece in pieces.dropFirst().prefix(20) {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmedSpace.lowercased()
            var parameter = piece[piece.index(after: equals)...].trimmedSpace
            if parameter.count >= 2 && parameter.hasPrefix("\"") && parameter.hasSuffix("\"") { parameter = String(parameter.dropFirst().dropLast()) }
            parameters[name] = parameter
        }
        return (type.isEmpty ? "text/plain" : type, parameters)
    }

    // MARK: - Decoding

    /// A body decoded from its transfer encoding and charset.
    static func decode(_ body: ArraySlice<UInt8>, encoding: String, charset: String) -> String {
        let bytes: [UInt8]
        switch encoding {
        case "base64": bytes = base64(body)
        case "quoted-printable": bytes = quotedPrintable(body)
        default: bytes = Array(body)
        }
        return string(bytes, charset: charset)
    }

    /// Bytes in `charset`: Latin-1 byte by byte, Windows-1252 likewise but for its 0x80–0x9F;
    /// anything else as UTF-8 with replacement (US-ASCII is UTF-8; a charset the mock does not
    /// know shows replacement characters, never a crash).
    static func string(_ bytes: [UInt8], charset: String) -> String {
        switch charset {
        case "iso-8859-1", "latin1":
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        case "windows-1252", "cp1252":
            return String(String.UnicodeScalarView(bytes.map { byte in
                (0x80...0x9F).contains(byte) ? windows1252[Int(byte - 0x80)] : Unicode.Scalar(byte)
            }))
        default:
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Windows-1252's 0x80–0x9F (its five undefined bytes as themselves, as WHATWG decodes them).
    private static let windows1252: [Unicode.Scalar] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ].map { Unicode.Scalar(UInt32($0)) ?? "?" }

    /// Base64, skipping line breaks and anything outside the alphabet.
    static func base64(_ text: some Collection<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text {
            let value: UInt32
            switch byte {
            case 65...90: value = UInt32(byte - 65)
            case 97...122: value = UInt32(byte - 97 + 26)
            case 48...57: value = UInt32(byte - 48 + 52)
            case 43, 45: value = 62
            case 47, 95: value = 63
            case 61: return output
            default: continue
            }
            buffer = (buffer << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return output
    }

    /// Quoted-printable (RFC 2045 §6.7): `=XX` escapes and `=` soft line breaks.
    static func quotedPrintable(_ text: some Collection<UInt8>, underscoreIsSpace: Bool = false) -> [UInt8] {
        let bytes = Array(text)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 61 {
                if index + 1 < bytes.count && bytes[index + 1] == 10 {
                    index += 2
                    continue
                }
                if index + 2 < bytes.count && bytes[index + 1] == 13 && bytes[index + 2] == 10 {
                    index += 3
                    continue
                }
                if index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                    output.append(high << 4 | low)
                    index += 3
                    continue
                }
                output.append(byte)
            } else if byte == 95 && underscoreIsSpace {
                output.append(32)
            } else {
                output.append(byte)
            }
            index += 1
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }

    /// A header value with RFC 2047 encoded words (`=?charset?B|Q?text?=`) decoded; whitespace
    /// between two encoded words dropped, as the RFC says.
    static func decodeWords(_ value: String) -> String {
        var result = ""
        var rest = Substring(value)
        var lastWasEncoded = false
        while let start = rest.firstRange(of: "=?") {
            let before = rest[..<start.lowerBound]
            let afterStart = rest[start.upperBound...]
            let pieces = afterStart.split(separator: "?", maxSplits: 3, omittingEmptySubsequences: false)
            guard pieces.count == 4, pieces[3].hasPrefix("="), pieces[1].count == 1 else {
                result += before + "=?"
                rest = afterStart
                lastWasEncoded = false
                continue
            }
            if !(lastWasEncoded && before.allSatisfy { $0 == " " || $0 == "\t" }) { result += before }
            let charset = pieces[0].lowercased().split(separator: "*").first.map(String.init) ?? ""
            let encoded = Array(pieces[2].utf8)
            let bytes = pieces[1].uppercased() == "B" ? base64(encoded) : quotedPrintable(encoded, underscoreIsSpace: true)
            result += string(bytes, charset: charset)
            rest = pieces[3].dropFirst()
            lastWasEncoded = true
        }
        return result + rest
    }

    /// Bytes of a header line as text (UTF-8, with replacement).
    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmedSpace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
