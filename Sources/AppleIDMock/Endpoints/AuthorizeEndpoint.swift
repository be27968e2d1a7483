import MiniHTTP

/// `/auth/authorize` (apple-behaviour.md §1.2, §2.2). GET validates and shows the consent page
/// (or approves at once when the scenario auto-approves); POST is the consent page's answer,
/// taken only with the value of a page this server rendered (`mock_page`, once). Refusals are
/// `AuthorizeError`s, which answer for themselves.
struct AuthorizeEndpoint: Sendable {
    let domain: AppleIDDomain
    let tickets = ConsentTickets()
    let sameSite = SameSiteNotice()
    /// The mock's base URL (its scheme tells a same-site callback from a cross-site one).
    let site: SiteAddress

    /// GET: parameters from the query string.
    func show(_ request: HTTPRequest) throws -> HTTPResponse {
        guard let query = try? request.queryParameters() else {
            throw AuthorizeError.unsupported("query", "query string is not valid form encoding").rendered(domain.scenario.compatibility)
        }
        let validated = try domain.validateAuthorize(Self.parameters(query), duplicated: query.duplicatedNames)
        var response: HTTPResponse
        if let auto = domain.scenario.autoApprove {
            response = AuthorizePages.deliver(try domain.approve(validated, .init(userID: auto.user, hideEmail: auto.hideEmail)))
        } else {
            response = AuthorizePages.consent(validated, users: domain.users, ticket: tickets.issue())
        }
        if validated.responseMode == .formPost,
           let notice = sameSite.notice(clientID: validated.clientID, redirectURI: validated.redirectURI,
                                        mockScheme: site.url.hasPrefix("https:") ? "https" : "http", host: request.headers["Host"]) {
            response.note = JournalNote(reason: notice)
        }
        return response
    }

    /// POST: the consent form with the request's parameters and the user's choices.
    func decide(_ request: HTTPRequest) throws -> HTTPResponse {
        let compatibility = domain.scenario.compatibility
        guard request.mediaType == "application/x-www-form-urlencoded", let form = try? HTTPForm(decoding: request.body) else {
            throw AuthorizeError.unsupported("body", "body is not an application/x-www-form-urlencoded form").rendered(compatibility)
        }
        let validated = try domain.validateAuthorize(Self.parameters(form), duplicated: form.duplicatedNames)
        guard tickets.take(form["mock_page"]) else {
            throw AuthorizeError.unsupported("mock_page", "this consent form is not one this mock showed, or it was sent already "
                + "(a form on another site, a second submit, or a page from before a restart); POST /__mock/authorize signs in without a page")
                .rendered(compatibility)
        }
        if form["mock_action"] == "cancel" { return AuthorizePages.deliver(domain.cancel(validated)) }
        let hide: Bool? = switch form["mock_email"] {
        case "hide": true
        case "share": false
        default: nil
        }
        guard let user = form["mock_user"] ?? domain.users.first(where: { !$0.deleted })?.user.id else {
            throw AuthorizeError.unsupported("mock_user", "mock_user missing and every user's account is deleted").rendered(compatibility)
        }
        let approval = AppleIDDomain.Approval(userID: user, hideEmail: hide,
                                              givenName: Self.nonEmpty(form["mock_given_name"]), familyName: Self.nonEmpty(form["mock_family_name"]))
        return AuthorizePages.deliver(try domain.approve(validated, approval))
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
