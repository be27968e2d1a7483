import Glibc

/// The default of `HTTPServerConfiguration.log`: standard error.
public enum HTTPServerLog {
    /// Writes one line to standard error, marked `[MiniHTTP]`.
    @Sendable public static func write(_ message: String) {
        let line = Array("[MiniHTTP] \(message)\n".utf8)
        line.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
