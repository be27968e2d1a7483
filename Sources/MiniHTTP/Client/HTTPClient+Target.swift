extension HTTPClient {
    /// Where a URL points: scheme, host (brackets removed), port, and the request target.
    struct Target: Equatable {
        var secure: Bool
        var host: String
        var port: Int
        var path: String

        /// The `Host` header value.
        var authority: String {
            let name = host.contains(":") ? "[\(host)]" : host
            return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
        }

        /// Parses `http(s)://host[:port][/path][?query]` (the scheme in any case): printable ASCII
        /// only, no backslash, no userinfo, no fragment, a port from 1 to 65535, a host of
        /// letters, digits, `-` and `.` (or a bracketed IPv6 address). The scenario loader checks
        /// notification URLs with this same rule (`HTTPClient.isSendable`).
        init(_ url: String) throws(Failure) {
            let secure: Bool
            var rest: Substring
            let scheme = String(url.prefix(8)).lowercasedASCII()
            if scheme.hasPrefix("https://") {
                secure = true
                rest = url.dropFirst(8)
            } else if scheme.hasPrefix("http://") {
                secure = false
                rest = url.dropFirst(7)
            } else {
                throw .invalidURL(url)
            }
            guard !url.contains("#"), url.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "\\") }) else { throw .invalidURL(url) }
            let slash = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            var authority = rest[..<slash]
            let target = rest[slash...]
            guard !authority.contains("@") else { throw .invalidURL(url) }
            var port = secure ? 443 : 80
            var host: Substring
            let bracketed = authority.hasPrefix("[")
            if bracketed {
                guard let close = authority.firstIndex(of: "]") else { throw .invalidURL(url) }
                host = authority[authority.index(after: authority.startIndex)..<close]
                authority = authority[authority.index(after: close)...]
                if !authority.isEmpty {
                    guard authority.hasPrefix(":"), let value = Int(authority.dropFirst()), (1...65535).contains(value) else { throw .invalidURL(url) }
                    port = value
                }
            } else if let colon = authority.lastIndex(of: ":") {
                guard let value = Int(authority[authority.index(after: colon)...]), (1...65535).contains(value) else { throw .invalidURL(url) }
                port = value
                host = authority[..<colon]
            } else {
                host = authority
            }
            guard !host.isEmpty, host.utf8.allSatisfy({ Self.isHostByte($0, bracketed: bracketed) }) else {
                throw .invalidURL(url)
            }
            self.secure = secure
            self.host = String(host)
            self.port = port
            path = target.isEmpty ? "/" : (target.hasPrefix("?") ? "/" + target : String(target))
        }

        /// Letters, digits, `-`, `.`; and `:` inside brackets (IPv6).
        private static func isHostByte(_ byte: UInt8, bracketed: Bool) -> Bool {
            (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 46
                || (bracketed && byte == 58)
        }
    }

    /// Whether `send` can use `url`: the one rule for outbound URLs, which the scenario loader
    /// applies to notification URLs so that a scenario never names a URL the sender refuses.
    public static func isSendable(url: String) -> Bool {
        (try? Target(url)) != nil
    }
}
