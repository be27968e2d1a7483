import Glibc
import MiniHTTP

/// Why the mock could not start.
public enum AppleIDMockError: Error, Sendable, CustomStringConvertible {
    /// The scenario is invalid.
    case scenario(ScenarioError)
    /// The signing keys could not be loaded.
    case keys(KeyRingError)
    /// The socket could not be bound.
    case bind(SocketError)
    /// The TLS certificate or key could not be used.
    case tls(TLSServerContext.Failure)
    /// `mailForward` is not `smtp://HOST:PORT`.
    case mailForward(String)
    /// The state file cannot be used (in use, damaged, newer, another scenario's).
    case state(StateFileError)

    /// A one-line (or, for scenarios, one-per-problem) explanation.
    public var description: String {
        switch self {
        case .scenario(let error): "invalid scenario:\n\(error)"
        case .keys(let error): "signing keys: \(error)"
        case .bind(let error):
            if let address = error.address {
                "cannot listen on \(address): \(error.reason)"
                    + (error.code == EADDRINUSE ? " — another process is using the port; pick another with --port" : "")
            } else {
                "cannot listen: \(error)"
            }
        case .tls(let error): "TLS: \(error)"
        case .mailForward(let value): "--mail-forward: expected smtp://HOST:PORT, found \"\(value)\""
        case .state(let error): error.description
        }
    }
}
