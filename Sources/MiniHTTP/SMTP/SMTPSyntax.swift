import Glibc

/// The grammar of SMTP paths and domains (RFC 5321 §4.1.2, §4.1.3), on bytes. Pure, and safe on
/// any input: every index is checked against its slice before it is read.
enum SMTPSyntax {
    /// Longest path, `<` and `>` included (RFC 5321 §4.5.3.1.3).
    static let maxPathBytes = 256
    /// Longest domain (RFC 5321 §4.5.3.1.2).
    static let maxDomainBytes = 255
    /// Longest label of a domain (RFC 1035 §2.3.4).
    static let maxLabelBytes = 63

    /// ALPHA / DIGIT.
    static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
    }

    /// atext (RFC 5322 §3.2.3, used by RFC 5321's Atom): the bytes of a dot-string's atoms.
    static func isAtext(_ byte: UInt8) -> Bool {
        if isLetterOrDigit(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "?"),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"),
             UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// The index just after the `>` that closes the path opening with `<` at `from`, or nil when
    /// there is none. A `>` inside a quoted local part does not close the path; a quoted pair
    /// (`\` and any byte) is skipped as one.
    static func pathEnd(_ line: ArraySlice<UInt8>, from: Int) -> Int? {
        guard from >= line.startIndex, from < line.endIndex, line[from] == UInt8(ascii: "<") else { return nil }
        var index = from + 1
        var quoted = false
        while index < line.endIndex {
            let byte = line[index]
            if quoted {
                if byte == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { quoted = false }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ">") {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    /// The address inside a path's brackets (`path` without `<` and `>`), with a source route
    /// (`@a,@b:`, RFC 5321 §4.1.2 A-d-l, to be ignored per §C) removed; nil when it is not
    /// `[ A-d-l ":" ] Mailbox`. The null path is not a mailbox: callers check for it first.
    static func mailbox(inPath path: ArraySlice<UInt8>) -> String? {
        var rest = path
        if rest.first == UInt8(ascii: "@") {
            guard let colon = rest.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            for hop in rest[rest.startIndex..<colon].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                guard hop.first == UInt8(ascii: "@"), isDomain(hop.dropFirst()) else { return nil }
            }
            rest = rest[(colon + 1)...]
        }
        guard isMailbox(rest) else { return nil }
        return String(decoding: rest, as: UTF8.self)
    }

    /// Mailbox = Local-part "@" ( Domain / address-literal ).
    static func isMailbox(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let at = localPartEnd(bytes), at < bytes.endIndex, bytes[at] == UInt8(ascii: "@") else { return false }
        let domain = bytes[(at + 1)...]
        return isDomain(domain) || isAddressLiteral(domain)
    }

    /// The index just after a Local-part (Dot-string or Quoted-string) at the start of `bytes`,
    /// or nil when there is none.
    private static func localPartEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        guard index < bytes.endIndex else { return nil }
        if bytes[index] == UInt8(ascii: "\"") {
            // Quoted-string: qtextSMTP = %d32-33 / %d35-91 / %d93-126; quoted-pairSMTP = "\" %d32-126.
            index += 1
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { return index + 1 }
                if byte == UInt8(ascii: "\\") {
                    guard index + 1 < bytes.endIndex, (32...126).contains(bytes[index + 1]) else { return nil }
                    index += 2
                    continue
                }
                guard (32...126).contains(byte) else { return nil }
                index += 1
            }
            return nil
        }
        // Dot-string = Atom *("." Atom): no empty atom, so no leading, trailing or double dot.
        var atomLength = 0
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                guard atomLength > 0 else { return nil }
                atomLength = 0
            } else if isAtext(byte) {
                atomLength += 1
            } else {
                break
            }
            index += 1
        }
        return atomLength > 0 ? index : nil
    }

    /// Domain = sub-domain *("." sub-domain); sub-domain = Let-dig [Ldh-str] (RFC 5321 §4.1.2):
    /// labels of letters, digits and inner hyphens, at most 63 bytes each and 255 in all. With
    /// `allowingUnderscore`, `_` counts as a letter (hosts named on Windows say `EHLO my_pc`).
    static func isDomain(_ bytes: ArraySlice<UInt8>, allowingUnderscore: Bool = false) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxDomainBytes else { return false }
        for label in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard let first = label.first, let last = label.last, label.count <= maxLabelBytes else { return false }
            let isLetDig: (UInt8) -> Bool = { isLetterOrDigit($0) || (allowingUnderscore && $0 == UInt8(ascii: "_")) }
            guard isLetDig(first), isLetDig(last), label.allSatisfy({ isLetDig($0) || $0 == UInt8(ascii: "-") }) else { return false }
        }
        return true
    }

    /// address-literal = "[" ( IPv4-address-literal / IPv6-address-literal /
    /// General-address-literal ) "]" (RFC 5321 §4.1.3). IP addresses are checked with `inet_pton`;
    /// a general literal is `tag ":" 1*dcontent`.
    static func isAddressLiteral(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count >= 3, bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else { return false }
        let inside = bytes.dropFirst().dropLast()
        // dcontent = %d33-90 / %d94-126: printable, no "[", "\" or "]".
        guard inside.allSatisfy({ (33...90).contains($0) || (94...126).contains($0) }) else { return false }
        if inside.allSatisfy({ (48...57).contains($0) || $0 == UInt8(ascii: ".") }) {
            var address = in_addr()
            return inet_pton(AF_INET, String(decoding: inside, as: UTF8.self), &address) == 1
        }
        guard let colon = inside.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let tag = inside[inside.startIndex..<colon]
        let value = inside[(colon + 1)...]
        guard !value.isEmpty, let first = tag.first, let last = tag.last, isLetterOrDigit(first), isLetterOrDigit(last),
              tag.allSatisfy({ isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }) else { return false }
        if String(decoding: tag, as: UTF8.self).lowercased() == "ipv6" {
            var address = in6_addr()
            return inet_pton(AF_INET6, String(decoding: value, as: UTF8.self), &address) == 1
        }
        return true
    }

    /// The bytes with ASCII letters upper-cased.
    static func uppercased<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        bytes.map { (97...122).contains($0) ? $0 - 32 : $0 }
    }

    /// True when `bytes` starts with `prefix`, ASCII letters compared without case.
    static func hasPrefix(_ bytes: ArraySlice<UInt8>, caseInsensitive prefix: String) -> Bool {
        let wanted = Array(prefix.utf8)
        guard bytes.count >= wanted.count else { return false }
        return uppercased(bytes.prefix(wanted.count)) == uppercased(wanted)
    }
}
