import JOSE
import MiniHTTP

/// `GET /__mock/health`: liveness for CI and Docker health checks. It answers at once, whatever
/// the state file's writer is doing, naming the signing kid as of the last commit.
struct HealthEndpoint: Sendable {
    let domain: AppleIDDomain

    /// `{"active_kid":…,"issuer":…,"status":"ok"}` (control answers have sorted keys); while the
    /// state file's commits fail, 503 with `"status": "unavailable"` and `"state_file"` saying why
    /// (`not writable (disk full)`): the mock answers no change until the file takes it.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        var body = JSONObject()
        body["issuer"] = .string(domain.issuer)
        body["active_kid"] = domain.publishedKeys.signingKeyID.map(JSONValue.string) ?? .null
        guard let failure = domain.commitFailure else {
            body["status"] = "ok"
            return ControlResponse.json(.object(body))
        }
        body["status"] = "unavailable"
        body["state_file"] = .string(failure.reason)
        return ControlResponse.json(.object(body), status: .serviceUnavailable)
    }
}
