/// Decoded `application/x-www-form-urlencoded` pairs (WHATWG URL §5.1), in order, duplicates kept.
public struct HTTPForm: Sendable, Equatable, Sequence {
    /// The decoded name/value pairs.
    public private(set) var pairs: [(name: String, value: String)]

    /// Pairs given directly.
    public init(_ pairs: [(name: String, value: String)] = []) {
        self.pairs = pairs
    }

    /// Decodes form bytes: `&`-separated, `+` is a space, `%XX` escapes; empty segments skipped.
    public init(decoding bytes: [UInt8]) throws(HTTPFormError) {
        var pairs: [(String, String)] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "&") { end += 1 }
            if end > start {
                var equals = start
                while equals < end && bytes[equals] != UInt8(ascii: "=") { equals += 1 }
                let name = try Self.unescape(bytes, start, equals)
                let value = equals < end ? try Self.unescape(bytes, equals + 1, end) : ""
                pairs.append((name, value))
            }
            start = end + 1
        }
        self.pairs = pairs
    }

    /// The first value of `name`.
    public subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        pairs.filter { $0.name == name }.map(\.value)
    }

    /// Names that occur more than once, each listed once, in the order their second occurrence
    /// appears. Linear in the number of pairs: both membership checks are hash lookups (a scan of
    /// the names already reported made a form of n distinct names each sent twice cost O(n²)).
    public var duplicatedNames: [String] {
        var seen = Set<String>()
        var reported = Set<String>()
        var duplicated: [String] = []
        for pair in pairs where !seen.insert(pair.name).inserted && reported.insert(pair.name).inserted {
            duplicated.append(pair.name)
        }
        return duplicated
    }

    /// Iterates pairs in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { pairs.makeIterator() }

    /// Pairwise equality in order.
    public static func == (lhs: HTTPForm, rhs: HTTPForm) -> Bool {
        lhs.pairs.count == rhs.pairs.count && zip(lhs.pairs, rhs.pairs).allSatisfy { $0 == $1 }
    }

    /// Encodes pairs as form data; unreserved characters (`A-Z a-z 0-9 - . _ *`) stay, space is `+`.
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Percent-encodes one form component.
    public static func escape(_ string: String) -> String {
        var out: [UInt8] = []
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "*"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Percent-decodes a path or component (`+` stays `+`); nil on malformed input.
    public static func percentDecode(_ string: String) -> String? {
        let bytes = Array(string.utf8)
        return try? unescape(bytes, 0, bytes.count, plusIsSpace: false)
    }

    private static func unescape(_ bytes: [UInt8], _ from: Int, _ to: Int, plusIsSpace: Bool = true) throws(HTTPFormError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(to - from)
        var index = from
        while index < to {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < to, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                    throw .badPercentEscape(offset: index)
                }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        guard let string = String(validating: out, as: UTF8.self) else { throw .invalidUTF8 }
        return string
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
