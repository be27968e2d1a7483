import MiniHTTP

/// `/auth/authorize` (apple-reference.md §1.2, §2.2). GET validates and shows the consent page
/// (or approves at once when the scenario auto-approves); POST is the consent page's answer.
struct AuthorizeEndpoint: Sendable {
    let domain: AppleIDDomain

    /// GET: parameters from the query string.
    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let query = try? request.queryParameters() else {
            return AuthorizePages.error(.unsupported("query"), compatibility: domain.scenario.compatibility)
        }
        let validated: AuthorizeRequest
        do {
            validated = try domain.validateAuthorize(Self.parameters(query), duplicated: query.duplicatedNames)
        } catch {
            return AuthorizePages.error(error, compatibility: domain.scenario.compatibility)
        }
        guard let auto = domain.scenario.autoApprove else { return AuthorizePages.consent(validated, scenario: domain.scenario) }
        return try approve(validated, .init(userID: auto.user, hideEmail: auto.hideEmail))
    }

    /// POST: the consent form with the request's parameters and the user's choices.
    func decide(_ request: HTTPRequest) throws -> HTTPResponse {
        let compatibility = domain.scenario.compatibility
        guard request.mediaType == "application/x-www-form-urlencoded", let form = try? HTTPForm(decoding: request.body) else {
            return AuthorizePages.error(.unsupported("body"), compatibility: compatibility)
        }
        let validated: AuthorizeRequest
        do {
            validated = try domain.validateAuthorize(Self.parameters(form), duplicated: form.duplicatedNames)
        } catch {
            return AuthorizePages.error(error, compatibility: compatibility)
        }
        if form["mock_action"] == "cancel" { return AuthorizePages.deliver(domain.cancel(validated)) }
        let hide: Bool? = switch form["mock_email"] {
        case "hide": true
        case "share": false
        default: nil
        }
        guard let user = form["mock_user"] ?? domain.scenario.users.first?.id else {
            return AuthorizePages.error(.unsupported("mock_user"), compatibility: compatibility)
        }
        let approval = AppleIDDomain.Approval(userID: user, hideEmail: hide,
                                              givenName: Self.nonEmpty(form["mock_given_name"]), familyName: Self.nonEmpty(form["mock_family_name"]))
        return try approve(validated, approval)
    }

    /// Approves and delivers; a refusal is shown on Apple's error page (a full code store as 503).
    private func approve(_ validated: AuthorizeRequest, _ approval: AppleIDDomain.Approval) throws -> HTTPResponse {
        do {
            return AuthorizePages.deliver(try domain.approve(validated, approval))
        } catch let error as AuthorizeError {
            return AuthorizePages.error(error, compatibility: domain.scenario.compatibility)
        } catch let error as CapacityError {
            let refusal = AuthorizeError(code: "temporarily_unavailable", message: error.message, field: "code")
            return AuthorizePages.error(refusal, compatibility: domain.scenario.compatibility, status: .serviceUnavailable)
        }
    }

    /// First value of each parameter (duplicates are reported separately).
    static func parameters(_ form: HTTPForm) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, value) in form where parameters[name] == nil { parameters[name] = value }
        return parameters
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
