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

        /// Parses `http(s)://host[:port][/path][?query]`; userinfo and fragments are refused.
        init(_ url: String) throws(Failure) {
            let secure: Bool
            var rest: Substring
            if url.hasPrefix("https://") {
                secure = true
                rest = url.dropFirst(8)
            } else if url.hasPrefix("http://") {
                secure = false
                rest = url.dropFirst(7)
            } else {
                throw .invalidURL(url)
            }
            guard !url.contains("#"), url.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else { throw .invalidURL(url) }
            let slash = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            var authority = rest[..<slash]
            let target = rest[slash...]
            guard !authority.contains("@") else { throw .invalidURL(url) }
            var port = secure ? 443 : 80
            var host: Substring
            if authority.hasPrefix("[") {
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
            guard !host.isEmpty else { throw .invalidURL(url) }
            self.secure = secure
            self.host = String(host)
            self.port = port
            path = target.isEmpty ? "/" : (target.hasPrefix("?") ? "/" + target : String(target))
        }
    }
}
