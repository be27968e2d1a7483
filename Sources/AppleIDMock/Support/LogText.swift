/// Makes request-controlled text safe for one log line: control characters escaped (no forged
/// lines, no terminal escapes) and length bounded, the cut marked with `…`. Escaping twice
/// changes nothing, so a line of clipped values can be passed through `escaped` again.
package enum LogText {
    /// Most bytes one quoted value takes, escapes included.
    static let valueLimit = 120
    /// Most bytes of a whole log line.
    static let lineLimit = 1024

    /// `text` escaped and clipped to `valueLimit` bytes: for a claim, an id or a parameter
    /// quoted inside a reason.
    package static func clip(_ text: some StringProtocol) -> String {
        escaped(text, limit: valueLimit)
    }

    /// The first 8 characters of a value that works as a credential (a `transfer_sub`), then `…`:
    /// enough to tell values apart in a log, too little to use one.
    static func hint(_ text: some StringProtocol) -> String {
        escaped(text.prefix(8), limit: valueLimit) + (text.count > 8 ? "…" : "")
    }

    /// `text` escaped and clipped to `limit` bytes.
    package static func escaped(_ text: some StringProtocol, limit: Int = lineLimit) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            let piece = escape(scalar)
            let size = piece.utf8.count
            if bytes + size > limit {
                out.append(contentsOf: "…".unicodeScalars)
                break
            }
            out.append(contentsOf: piece.unicodeScalars)
            bytes += size
        }
        return String(out)
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        // C0, DEL, C1, and the Unicode line and paragraph separators.
        case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029:
            return "\\u{" + String(scalar.value, radix: 16) + "}"
        default: return String(scalar)
        }
    }
}
