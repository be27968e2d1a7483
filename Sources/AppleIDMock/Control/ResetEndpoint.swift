import JOSE
import MiniHTTP

/// `POST /__mock/reset`: everything back to the scenario's initial state in one operation —
/// users, consents, codes, transfers, keys, clock. Codes and tokens from before stop working,
/// and notifications still queued are abandoned: none reaches the next test's receiver.
/// Answers `{"active_kid", "now"}`.
struct ResetEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try ControlRequest(request, for: ControlOperations.reset)
        // The deliverer reads the reset's event before this returns and abandons what was queued.
        // Faults go back to the scenario's with everything else: they are part of the state.
        let (signingKeyID, now) = domain.reset()
        var answer = JSONObject()
        answer["active_kid"] = signingKeyID.map(JSONValue.string) ?? .null
        answer["now"] = .string(RFC3339.format(now))
        return ControlResponse.json(.object(answer))
    }
}
