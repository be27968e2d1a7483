/// How much the mock says on its log, each level including the ones before it.
public enum AppleIDMockLogLevel: String, Sendable, CaseIterable, Comparable {
    /// Only failures of the mock itself.
    case error
    /// Also notices: the key fallback, exposure warnings, undelivered notifications.
    case warn
    /// Also one line per request Apple's endpoints refused, saying why (the default).
    case info
    /// Also one line per answered request, successes included.
    case debug

    /// The names, as `serve --log-level` accepts them.
    package static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Orders by verbosity: `error` < `warn` < `info` < `debug`.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .error: 0
        case .warn: 1
        case .info: 2
        case .debug: 3
        }
    }
}
