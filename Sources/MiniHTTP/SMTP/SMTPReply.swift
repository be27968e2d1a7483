/// One SMTP reply (RFC 5321 §4.2): a three-digit code and one or more lines of text, each line
/// carrying the enhanced status code (RFC 3463) when there is one.
public struct SMTPReply: Sendable, Equatable {
    /// The reply code, 200...599 on the wire (anything else is sent as 451, see `bytes`).
    public var code: Int
    /// The text of each line, without the code: a multiline reply sends `250-` before every
    /// line but the last, which gets `250 ` (RFC 5321 §4.2.1). Empty sends one line with no text.
    public var lines: [String]

    /// A one-line reply, `CODE ENHANCED TEXT` (or `CODE TEXT` when `enhanced` is nil).
    public init(_ code: Int, _ enhanced: String?, _ text: String) {
        self.code = code
        self.lines = [enhanced.map { "\($0) \(text)" } ?? text]
    }

    /// A reply whose lines already carry any enhanced status code.
    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// True for a 2xx reply: the command was accepted.
    public var isPositive: Bool { (200...299).contains(wireCode) }

    /// The code as sent: `code` when it is 200...599, else 451 (local error), so that the wire
    /// always carries three digits a client can act on, whatever a handler returned.
    public var wireCode: Int { (200...599).contains(code) ? code : 451 }

    /// The wire form: each line as `CODE-TEXT` or, for the last, `CODE TEXT`, ended by CRLF. A CR
    /// or LF inside a line's text is sent as a space, so no text can end a reply early or forge
    /// another one.
    public var bytes: [UInt8] {
        let prefix = Array(String(wireCode).utf8)
        let texts = lines.isEmpty ? [""] : lines
        var out: [UInt8] = []
        out.reserveCapacity(texts.reduce(0) { $0 + $1.utf8.count + 6 })
        for (index, text) in texts.enumerated() {
            out.append(contentsOf: prefix)
            out.append(index == texts.count - 1 ? UInt8(ascii: " ") : UInt8(ascii: "-"))
            for byte in text.utf8 { out.append(byte == 13 || byte == 10 ? UInt8(ascii: " ") : byte) }
            out.append(13)
            out.append(10)
        }
        return out
    }

    /// The reply as one line of text for a log or an error: `CODE TEXT`, lines joined by spaces.
    public var text: String {
        "\(wireCode) " + lines.joined(separator: " ")
    }
}
