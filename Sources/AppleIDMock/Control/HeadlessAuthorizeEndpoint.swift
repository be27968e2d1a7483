import JOSE
import MiniHTTP

/// `POST /__mock/authorize`: the authorize flow without a browser. Takes the authorize
/// parameters and the user's choices as JSON and answers how Apple would deliver the result:
/// `{"form": {…}, "method": "GET"|"POST", "url": …}` — hand it to the backend's callback — or,
/// for `web_message`, `{"message": …, "method": "postMessage", "target_origin": …}`: the exact
/// string the popup posts to `window.opener` and the origin it posts to.
struct HeadlessAuthorizeEndpoint: Sendable {
    let domain: AppleIDDomain

    static let parameterFields = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
                                  "code_challenge", "code_challenge_method"]
    static let choiceFields = ["user", "hide_email", "given_name", "family_name", "cancel", "defect"]

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try ControlRequest(request, for: ControlOperations.headlessAuthorize)
        var parameters: [String: String] = [:]
        for name in Self.parameterFields {
            if let value = try body.optionalString(name) { parameters[name] = value }
        }
        let validated: AuthorizeRequest
        do {
            validated = try domain.validateAuthorize(parameters)
        } catch {
            throw HeadlessAuthorizeRefusal(error: error)
        }
        for name in Self.choiceFields where name == "given_name" || name == "family_name" {
            _ = try body.optionalString(name, maxBytes: AuthorizeRequest.maxStringBytes)
        }
        let delivery: Delivery
        if try body.optionalBool("cancel") == true {
            delivery = domain.cancel(validated)
        } else {
            guard let user = try body.optionalString("user", maxBytes: 64) ?? domain.scenario.autoApprove?.user else {
                throw ControlRequest.Failure(message: "missing required field", field: "user")
            }
            let approval = AppleIDDomain.Approval(userID: user, hideEmail: try body.optionalBool("hide_email") ?? domain.scenario.autoApprove?.hideEmail,
                                                  givenName: try body.optionalString("given_name"),
                                                  familyName: try body.optionalString("family_name"), defect: try body.optionalDefect())
            do {
                delivery = try domain.approve(validated, approval)
            } catch let error as AuthorizeError {
                throw HeadlessAuthorizeRefusal(error: error)
            }
        }
        var form = JSONObject()
        var answer = JSONObject()
        if delivery.responseMode == .webMessage {
            answer["message"] = .string(delivery.webMessage)
            answer["method"] = "postMessage"
            answer["target_origin"] = .string(delivery.targetOrigin)
            return ControlResponse.json(.object(answer))
        }
        if delivery.method == "POST" {
            for (name, value) in delivery.parameters { form[name] = .string(value) }
            answer["url"] = .string(delivery.redirectURI)
        } else {
            answer["url"] = .string(AuthorizePages.location(delivery))
        }
        answer["method"] = .string(delivery.method)
        answer["form"] = .object(form)
        return ControlResponse.json(.object(answer))
    }
}
