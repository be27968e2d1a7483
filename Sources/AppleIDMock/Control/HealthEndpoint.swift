import JOSE
import MiniHTTP

/// `GET /__mock/health`: liveness for CI and Docker health checks.
struct HealthEndpoint: Sendable {
    let domain: AppleIDDomain

    /// `{"active_kid":…,"issuer":…,"status":"ok"}` (control answers have sorted keys).
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        var body = JSONObject()
        body["status"] = "ok"
        body["issuer"] = .string(domain.issuer)
        body["active_kid"] = domain.state.signingKeyID.map(JSONValue.string) ?? .null
        return ControlResponse.json(.object(body))
    }
}
