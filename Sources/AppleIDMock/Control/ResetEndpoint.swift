import JOSE
import MiniHTTP

/// `POST /__mock/reset`: everything back to the scenario's initial state in one operation —
/// users, consents, codes, transfers, keys, clock. Codes and tokens from before stop working,
/// and notifications still queued are abandoned: none reaches the next test's receiver.
/// Answers `{"active_kid", "now"}`.
struct ResetEndpoint: Sendable {
    let domain: AppleIDDomain
    /// Back to the scenario's faults too.
    let faults: FaultBook

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try ControlRequest(request, known: [])
        // The deliverer reads the reset's event before this returns and abandons what was queued.
        domain.state.reset()
        faults.reset()
        var answer = JSONObject()
        answer["active_kid"] = domain.state.signingKeyID.map(JSONValue.string) ?? .null
        answer["now"] = .string(RFC3339.format(domain.state.now))
        return ControlResponse.json(.object(answer))
    }
}
