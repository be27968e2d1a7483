import Glibc

/// Where the mock says what it decided on its own (a fallback, a warning): one line each.
public enum AppleIDMockLog {
    /// Writes `appleid-mock: <message>` and a newline to standard error.
    @Sendable public static func standardError(_ message: String) {
        let line = Array("appleid-mock: \(message)\n".utf8)
        var sent = 0
        while sent < line.count {
            let count = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + sent, $0.count - sent) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            sent += count
        }
    }
}
