import JOSE
import MiniHTTP

/// One of Apple's own incidents as a preset: the faults that reproduce it, installed, listed and
/// removed like any other (each carries `"incident": name`). `{"incident": name}` in a scenario's
/// `faults` or in `POST /__mock/faults` installs them; `minutes` bounds them in mock time.
public enum FaultIncident: String, Sendable, Equatable, CaseIterable {
    /// June 2025: Apple's discovery document named `https://account.apple.com` as the issuer, with
    /// every endpoint on that host, while id_tokens kept `iss: https://appleid.apple.com`; backends
    /// that took the issuer from discovery refused every sign-in.
    case discoveryIssuerFlip = "discovery-issuer-flip"
    /// `/auth/keys` lacks the kid that signs new tokens, as during a botched rotation.
    case jwksWithoutSigningKey = "jwks-without-signing-key"
    /// `/auth/token` answers 503 with an HTML page for a while (5 minutes of mock time unless
    /// `minutes` says otherwise).
    case tokenEndpointOutage = "token-endpoint-outage"
    /// Every notification is attempted once and never retried: Apple's retries are not
    /// documented, so a backend must not count on them.
    case notificationsOnce = "notifications-once"

    /// Keys of an incident request.
    static let keys = ["incident", "minutes"]
    /// Longest `minutes`: a year of mock time.
    static let maxMinutes = FaultSpec.maxForSeconds / 60
    /// How long the outage lasts when `minutes` is not given.
    static let defaultOutageMinutes = 5

    /// The issuer and host the June 2025 document named.
    static let flippedIssuer = "https://account.apple.com"

    /// What a backend sees, in a line (the CLI's `faults incidents` lists them).
    package var summary: String {
        switch self {
        case .discoveryIssuerFlip: "discovery redirects to a document naming https://account.apple.com as issuer; id_tokens keep appleid.apple.com (June 2025)"
        case .jwksWithoutSigningKey: "/auth/keys lacks the kid that signs new tokens (a botched rotation)"
        case .tokenEndpointOutage: "POST /auth/token answers 503 HTML for N minutes of mock time (default 5)"
        case .notificationsOnce: "notifications are attempted once, never retried"
        }
    }

    /// The faults that reproduce it, for `minutes` of mock time (nil: until removed; the outage
    /// defaults to 5).
    package func faults(minutes: Int? = nil) -> [FaultSpec] {
        let seconds = (minutes ?? (self == .tokenEndpointOutage ? Self.defaultOutageMinutes : nil)).map { $0 * 60 }
        var faults: [FaultSpec]
        switch self {
        case .discoveryIssuerFlip:
            // Apple's discovery redirected to account.apple.com's, which named itself the issuer. Here
            // the redirect goes to the path the mock serves for that host (DiscoveryEndpoint.flipped):
            // its issuer is account.apple.com, its endpoints the mock's, so no client is sent to a host
            // it cannot reach. The status of Apple's redirect is not on record [U]: a 302.
            faults = [Self.http(.get, "/.well-known/openid-configuration",
                                .respond(status: 302, headers: [("Location", DiscoveryEndpoint.flippedPath)], body: ""))]
        case .jwksWithoutSigningKey:
            faults = [Self.http(.get, "/auth/keys", .omitSigningKey)]
        case .tokenEndpointOutage:
            faults = [Self.http(.post, "/auth/token", .respond(status: 503, headers: [("Content-Type", "text/html; charset=utf-8")],
                                                                body: Self.outagePage))]
        case .notificationsOnce:
            faults = [FaultSpec(target: .notifications(type: nil, clientID: nil), action: .once)]
        }
        for index in faults.indices {
            faults[index].forSeconds = seconds
            faults[index].incident = rawValue
        }
        return faults
    }

    /// The page of the outage. Apple's own outage page is not on record: this one says what it
    /// stands for, and the status and content type are what a backend meets.
    static let outagePage = "<html><head><title>503 Service Unavailable</title></head>"
        + "<body><h1>Service Unavailable</h1><p>appleid-mock: token-endpoint-outage</p></body></html>"

    private static func http(_ method: HTTPMethod, _ path: String, _ action: FaultSpec.Action) -> FaultSpec {
        FaultSpec(target: .http(method: method, path: path, clientID: nil, grantType: nil), action: action)
    }

    /// The faults an entry of a scenario's `faults` or a `POST /__mock/faults` body stands for:
    /// one fault, or an incident's (`{"incident": name, "minutes": n}`, no `action`).
    static func entries(json value: JSONValue) throws(FaultSpec.Problem) -> [FaultSpec] {
        guard case .object(let object) = value, let name = object["incident"], object["action"] == nil else {
            return [try FaultSpec(json: value)]
        }
        for key in object.keys where !keys.contains(key) {
            throw FaultSpec.Problem(key: key, message: "not a key of an incident (expected incident and, optionally, minutes)")
        }
        let names = allCases.map(\.rawValue).joined(separator: ", ")
        guard case .string(let text) = name, let incident = FaultIncident(rawValue: text) else {
            throw FaultSpec.Problem(key: "incident", message: "expected one of \(names)")
        }
        var minutes: Int?
        if let value = object["minutes"], value != .null {
            guard case .int(let number) = value, (1...Int64(maxMinutes)).contains(number) else {
                throw FaultSpec.Problem(key: "minutes", message: "expected an integer from 1 to \(maxMinutes)")
            }
            minutes = Int(number)
        }
        return incident.faults(minutes: minutes)
    }
}

extension FaultSpec {
    /// A fault from its parts: always firing, no delay.
    init(target: Target, action: Action) {
        self.target = target
        self.action = action
        firing = .always
        delayMilliseconds = 0
    }
}
