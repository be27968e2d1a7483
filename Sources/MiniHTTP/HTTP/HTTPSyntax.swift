/// Byte classes of the HTTP grammar, shared by the parser and the serializer so that what is
/// accepted and what is sent follow one definition.
enum HTTPSyntax {
    /// tchar (RFC 9110 §5.6.2): the bytes of a token, such as a method or a field name.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// HTAB, SP, VCHAR or obs-text (RFC 9110 §5.5): what a field value, a reason phrase or the
    /// inside of a quoted-string may hold. Never CR, LF, NUL or another control byte.
    static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 9 || (byte >= 32 && byte != 127)
    }

    /// True when `name` is a non-empty token.
    static func isToken<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
    }
}
