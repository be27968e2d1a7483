import FoundationEssentials
import MiniHTTP

/// A backend `appleid-mock audit` attacks: one sign-in at a time, through the mock, delivered to
/// the backend as Apple (and the app) would, with the id_token spoiled as `defect` says.
protocol AuditTarget {
    /// What the report calls the backend.
    var description: String { get }
    /// Whether a defect applies to this kind of backend (nonce-mismatch needs a nonce the backend sent).
    func applies(_ defect: String) -> Bool
    /// One sign-in, genuine (`defect` nil) or with a defective id_token, delivered to the backend.
    func attempt(defect: String?) throws -> AuditAttempt
}

/// One delivery to the backend and what came of it.
struct AuditAttempt {
    /// The backend's answer, or why there was none; nil when nothing could be delivered.
    let result: Result<HTTPClient.Response, HTTPClient.Failure>?
    /// The authorization code delivered (to find its exchange in the mock's journal).
    let code: String
    /// Why it could not be delivered, when it could not.
    var undelivered: String?

    /// What the backend answered, for the report.
    var summary: String {
        switch result {
        case .success(let response)?: "\(response.status)"
        case .failure(let failure)?: "no answer (\(failure))"
        case nil: undelivered ?? "not delivered"
        }
    }
}

/// A URL's scheme, host and port: two URLs of one origin may be sent to alike.
struct AuditOrigin: Equatable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init?(_ text: String) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    var description: String { "\(scheme)://\(host):\(port)" }
}
