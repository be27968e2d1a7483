import Synchronization

/// The notice a `form_post` authorize request gets when its return URL is the same site as the
/// address the browser reached the mock at (docs/apple-behaviour.md §11, item 2). Apple's POST to the callback comes from
/// `https://appleid.apple.com`, another site than any app's, so the browser withholds the app's
/// `SameSite=Lax` cookies; from a mock on the app's own site it sends them, and the bug users report
/// most (a state cookie missing in the callback) passes in the test. The answer is unchanged; the
/// notice is written once per client and return URL, for the first `capacity` pairs.
final class SameSiteNotice: Sendable {
    static let capacity = 1_000
    private let noticed = Mutex(Set<String>())

    /// The notice for this request, the first time its client and return URL are seen same-site
    /// with `mockScheme://host` (the request's Host header); nil otherwise.
    func notice(clientID: String, redirectURI: String, mockScheme: String, host: String?) -> String? {
        guard let host, let callback = Self.schemeAndHost(redirectURI),
              callback.scheme == mockScheme, Self.site(callback.host) == Self.site(host) else { return nil }
        let first = noticed.withLock { seen in
            guard seen.count < Self.capacity, !seen.contains(clientID + " " + redirectURI) else { return false }
            seen.insert(clientID + " " + redirectURI)
            return true
        }
        guard first else { return nil }
        return "the redirect_uri \(LogText.clip(redirectURI)) of \(LogText.clip(clientID)) is the same site as this mock (\(mockScheme)://\(LogText.clip(host))): "
            + "the browser sends its SameSite=Lax cookies on this form_post, which it withholds from the cross-site POST of Apple, "
            + "so a missing-cookie bug passes here; reach the mock under another site (docs/frontend-tests.md, Catch the cookie bug)"
    }

    /// The site of a host (port dropped, lowercased): an IP address is its own site, a name its
    /// last two labels (`localhost`, `example.com`). Without the public suffix list a name under a
    /// two-label suffix (`co.uk`) counts as one site with its neighbours: a notice too many, never one too few.
    static func site(_ hostAndPort: String) -> String {
        var host = Substring(hostAndPort.lowercased())
        if host.hasPrefix("[") {
            return String(host.prefix { $0 != "]" }) + "]"
        }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        if host.hasSuffix(".") { host = host.dropLast() }
        if host.allSatisfy({ $0.isNumber || $0 == "." }) { return String(host) }
        return host.split(separator: ".").suffix(2).joined(separator: ".")
    }

    /// `http` / `https` and the host part of an absolute URL.
    static func schemeAndHost(_ url: String) -> (scheme: String, host: String)? {
        guard let separator = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last.map(String.init) ?? ""
        return host.isEmpty ? nil : (scheme, host)
    }
}
