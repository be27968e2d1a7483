import FoundationEssentials
import JOSE
import MiniHTTP

/// Field rules for scenario values. Each returns nil when the value is fine, else what was expected.
package enum ScenarioRules {
    /// Apple's 10-character identifiers (Team ID, Key ID): upper-case letters and digits.
    static func appleID(kind: String) -> (String) -> String? {
        { value in
            value.utf8.count == 10 && value.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) }
                ? nil : "expected a 10-character \(kind) of upper-case letters and digits"
        }
    }

    /// A PEM SubjectPublicKeyInfo holding a P-256 key.
    static func p256PublicKey(_ pem: String) -> String? {
        (try? P256PublicKey(pem: pem)) == nil ? "expected a PEM P-256 public key (-----BEGIN PUBLIC KEY-----)" : nil
    }

    /// A bundle id or Services ID: printable, no spaces, at most 255 bytes.
    static func clientID(_ value: String) -> String? {
        !value.isEmpty && value.utf8.count <= 255 && value.utf8.allSatisfy { $0 > 32 && $0 < 127 }
            ? nil : "expected a client id (1 to 255 printable characters, no spaces)"
    }

    /// A scenario user id: letters, digits, `.`, `_`, `-`; never in the `sub` shape, which
    /// lookups by user would take for another user's `sub`.
    static func userID(_ value: String) -> String? {
        guard isKeyID(value) || (value.utf8.count <= 64 && !value.isEmpty && value.utf8.allSatisfy { $0 == 46 || isWordByte($0) }) else {
            return "expected 1 to 64 letters, digits, '.', '-' or '_'"
        }
        return isSubject(value) ? "expected an id that is not shaped like a sub (NNNNNN.<32 hex>.NNNN)" : nil
    }

    /// Apple's `sub` shape: `NNNNNN.<32 hex>.NNNN` (apple-behaviour.md §4).
    static func isSubject(_ value: String) -> Bool {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0].utf8.count == 6 && parts[0].utf8.allSatisfy { (48...57).contains($0) }
            && parts[1].utf8.count == 32 && parts[1].utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
            && parts[2].utf8.count == 4 && parts[2].utf8.allSatisfy { (48...57).contains($0) }
    }

    /// A mail domain: dot-separated labels of letters, digits and `-`, at most 253 bytes.
    static func mailDomain(_ value: String) -> String? {
        let labels = value.split(separator: ".", omittingEmptySubsequences: false)
        let fine = value.utf8.count <= 253 && labels.count >= 2 && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { isWordByte($0) && $0 != 95 }
                && label.utf8.first != 45 && label.utf8.last != 45
        }
        return fine ? nil : "expected a mail domain such as mail.example.com"
    }

    /// A plausible email address: one `@` with text on both sides, no space and no control
    /// character (NUL, TAB, CR, LF, DEL, …).
    static func email(_ value: String) -> String? {
        // One pass over the bytes: exactly one '@' with something on each side, no space or
        // ASCII control; the Unicode control check runs only for non-ASCII addresses.
        var at = -1, ats = 0, count = 0, ascii = true
        for byte in value.utf8 {
            guard byte > 32 && byte != 127 else { return "expected an email address" }
            if byte == UInt8(ascii: "@") { at = count; ats += 1 }
            if byte >= 128 { ascii = false }
            count += 1
        }
        guard ats == 1, at > 0, at < count - 1 else { return "expected an email address" }
        guard ascii || !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return "expected an email address" }
        return nil
    }

    /// An absolute http or https URL with a host, in printable ASCII without a backslash, and a
    /// port (when given) from 1 to 65535: a URL ends up in a `Location` header, where a
    /// CR or LF would inject one; non-ASCII is written percent-encoded.
    static func absoluteURL(_ value: String) -> String? {
        guard value.utf8.count <= 2048 else { return "expected an absolute URL of at most 2048 bytes" }
        guard value.utf8.allSatisfy({ $0 > 32 && $0 != 127 }) else {
            return "expected an absolute URL without spaces or control characters"
        }
        guard value.utf8.allSatisfy({ $0 < 128 }) else { return "expected an absolute URL in ASCII (percent-encode other characters)" }
        guard !value.contains("\\") else { return "expected an absolute URL without '\\'" }
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = url.host, !host.isEmpty else {
            return "expected an absolute URL"
        }
        if let port = explicitPort(value), !(1...65535).contains(port) { return "expected a port from 1 to 65535" }
        return nil
    }

    /// The port written in `value`'s authority (after `scheme://`), if any; -1 when it is not a number.
    private static func explicitPort(_ value: String) -> Int? {
        guard let start = value.firstRange(of: "://")?.upperBound else { return nil }
        let authority = value[start...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostEnd = authority.lastIndex(of: "]") ?? authority.startIndex
        guard let colon = authority[hostEnd...].lastIndex(of: ":") else { return nil }
        let digits = authority[authority.index(after: colon)...]
        guard !digits.isEmpty else { return nil }
        return digits.utf8.count <= 6 ? Int(digits) ?? -1 : -1
    }

    /// A URL notifications can be sent to: the sender's own rule (`HTTPClient.isSendable`), so
    /// that `scenario check` never passes a URL every delivery then refuses.
    static func notificationURL(_ value: String) -> String? {
        if let message = absoluteURL(value) { return message }
        return HTTPClient.isSendable(url: value)
            ? nil : "expected an http(s) URL the sender can use: ASCII without '\\', no user info, no #fragment, a port from 1 to 65535"
    }

    /// Apple's own rules for return URLs (apple-behaviour.md §1.2): https, a domain name (no IP
    /// address, no localhost), no fragment.
    static func strictRedirectURI(_ value: String) -> String? {
        guard let url = URL(string: value), let host = url.host?.lowercased() else { return "expected an absolute URL" }
        if url.scheme?.lowercased() != "https" { return strictHTTPSExpectation }
        if host == "localhost" || host.hasSuffix(".localhost") { return "expected a domain name, not localhost (strict_redirect_uris is on)" }
        if host.contains(":") || host.split(separator: ".").allSatisfy({ $0.allSatisfy(\.isNumber) }) {
            return "expected a domain name, not an IP address (strict_redirect_uris is on)"
        }
        if value.contains("#") { return "expected no #fragment (strict_redirect_uris is on)" }
        return nil
    }

    /// Apple's rule for a server-to-server notification endpoint (apple-behaviour.md §7 [D]: "one
    /// absolute HTTPS URL"), checked once the URL is otherwise valid (`notificationURL`): an
    /// `http://` URL is refused as an http return URL is.
    static func strictNotificationURL(_ value: String) -> String? {
        URL(string: value)?.scheme?.lowercased() == "http" ? strictHTTPSExpectation : nil
    }

    /// What the strict rules say of an http URL.
    static let strictHTTPSExpectation = "expected an https URL (strict_redirect_uris is on)"

    /// A signing key id in Apple's alphabet and length (apple-behaviour.md §1.5 [O]: 10 letters
    /// and digits today, 6 or 7 before): 1 to 10 ASCII letters and digits.
    package static func isKeyID(_ value: String) -> Bool {
        (1...10).contains(value.utf8.count) && value.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
    }

    /// What `isKeyID` expects, for messages.
    package static let keyIDExpectation = "expected a key id of 1 to 10 letters and digits (Apple's are 10, e.g. W2ek7HdPaL)"

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
    }
}
