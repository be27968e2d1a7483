import MiniHTTP

/// The one list of every path the mock serves.
enum Routes {
    /// Builds the immutable route table over `domain`; `requests` says on the log why Apple's
    /// endpoints refused a request (and, at `debug`, what every route answered).
    static func table(domain: AppleIDDomain, site: SiteAddress, control: ControlGuard, notifications: NotificationDeliverer? = nil,
                      requests: RequestLog = .silent, journal: RequestJournal? = nil, mail: MailBox? = nil) -> RouteTable {
        // Faults act on Apple's routes only, never on /__mock.
        var router = MockRouter(log: requests, control: control, faults: FaultGate(domain: domain))
        // Apple's endpoints (apple-behaviour.md §1.1). Signing costs CPU, so handlers that sign
        // run deferred, off the I/O threads.
        let authorize = AuthorizeEndpoint(domain: domain, site: site)
        let authorizeParameters = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
                                   "code_challenge", "code_challenge_method"]
        router.apple(.get, "/auth/authorize", authorize.show, summary: "Apple's sign-in page: validates the request, shows consent",
                   reads: authorizeParameters)
        router.apple(.post, "/auth/authorize", authorize.decide, summary: "The consent page's answer: delivers code, id_token, state and user",
                   reads: authorizeParameters + ["mock_user", "mock_email", "mock_given_name", "mock_family_name", "mock_action", "mock_page"])
        router.apple(.post, "/auth/token", TokenEndpoint(domain: domain).handle,
                     summary: "Exchanges a code or refresh token, or issues a client_credentials token",
                   reads: ["client_id", "client_secret", "grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope"])
        // Revoke and migration parse forms and check signatures: off the I/O threads too.
        router.apple(.post, "/auth/revoke", RevokeEndpoint(domain: domain).handle,
                     summary: "Revokes a token and the user's consent for the app group", reads: ["client_id", "client_secret", "token"])
        router.apple(.get, "/auth/keys", immediate: KeysEndpoint(domain: domain).handle, summary: "The published signing keys (JWKS)")
        router.apple(.post, "/auth/usermigrationinfo", MigrationEndpoint(domain: domain).handle,
                     summary: "Team transfer: transfer_sub for the sending team, sub for the receiving one",
                   reads: ["client_id", "client_secret", "sub", "target", "transfer_sub"])
        router.apple(.get, "/.well-known/openid-configuration", immediate: DiscoveryEndpoint(domain: domain, site: site).handle,
                   summary: "The OpenID discovery document")
        router.apple(.get, DiscoveryEndpoint.flippedPath, immediate: DiscoveryEndpoint(domain: domain, site: site).flipped,
                     summary: "account.apple.com's discovery document of June 2025, where discovery-issuer-flip redirects")
        router.apple(.get, AppleJSEndpoint.path, immediate: AppleJSEndpoint().handle,
                     summary: "Sign in with Apple JS (compatible with Apple's, served at its CDN path)")
        // Control API: local, same-origin, JSON callers only (ControlGuard).
        // Health answers at once, whatever the state file's writer is doing (it names the committed signer).
        router.control(.get, "/__mock/health", .immediate(HealthEndpoint(domain: domain).handle),
                       summary: "Whether the mock is up, and the signing kid", waitsForCommit: false)
        router.control(.get, "/__mock/openapi.json", .immediate(OpenAPIEndpoint().handle), summary: "The OpenAPI 3.1 contract of every route")
        router.control(.post, "/__mock/id-token", .deferred(IdentityTokenEndpoint(domain: domain).handle),
                   summary: "Mints an id_token as a sign-in would, changing nothing", reads: ["user", "client_id", "nonce", "hide_email"])
        router.control(.post, "/__mock/authorize", .deferred(HeadlessAuthorizeEndpoint(domain: domain).handle),
                   summary: "The web authorize flow without a browser", reads: HeadlessAuthorizeEndpoint.parameterFields + HeadlessAuthorizeEndpoint.choiceFields)
        router.control(.post, "/__mock/sign-in", .deferred(SignInEndpoint(domain: domain).handle),
                   summary: "A native (iOS) sign-in: the credential an app receives", reads: SignInEndpoint.fields)
        router.control(.post, "/__mock/tokens", .deferred(TokensEndpoint(domain: domain).handle),
                   summary: "Forges an id_token or notification JWT, genuine or with one defect", reads: TokensEndpoint.fields)
        let clock = ClockEndpoint(domain: domain)
        router.control(.get, "/__mock/clock", .immediate(clock.show), summary: "The mock clock")
        // Moving the clock may run the key rotation pattern, which generates RSA keys: deferred.
        router.control(.post, "/__mock/clock", .deferred(clock.move),
                   summary: "Advances, sets or freezes the mock clock (rotations follow)", reads: ["advance", "set", "freeze"])
        let keys = KeysControlEndpoint(domain: domain)
        router.control(.get, "/__mock/keys", .immediate(keys.list), summary: "Every key the mock has known, with its state")
        router.control(.post, "/__mock/keys", .deferred(keys.publish),
                   summary: "Publishes a key (given or generated) without signing with it", reads: ["kid", "pem"])
        router.control(.post, "/__mock/keys/rotate", .deferred(keys.rotate), summary: "One rotation step: a fresh key published and signing")
        router.control(.post, "/__mock/keys/{kid}/activate", .deferred(keys.activate), summary: "Makes a published key sign new tokens")
        router.control(.delete, "/__mock/keys/{kid}", .deferred(keys.retire), summary: "Retires a key from /auth/keys")
        let users = UsersEndpoint(domain: domain)
        router.control(.get, "/__mock/users", .deferred(users.list), summary: "Users with account state, a page at a time")
        router.control(.post, "/__mock/users", .deferred(users.add),
                   summary: "Adds a user at run time", reads: ["id", "email", "given_name", "family_name", "hide_email", "real_user_status", "relay_domain"])
        router.control(.post, "/__mock/reset", .deferred(ResetEndpoint(domain: domain).handle),
                   summary: "Back to the scenario's initial state; queued notifications abandoned")
        router.control(.get, "/__mock/credential-state", .deferred(CredentialStateEndpoint(domain: domain).handle),
                   summary: "What getCredentialState answers on a device", reads: ["user", "client_id"])
        let events = EventsEndpoint(domain: domain, notifications: notifications)
        router.control(.post, "/__mock/events", .deferred(events.handle),
                   summary: "A user's action at Apple; its notifications follow", reads: ["type", "user", "client_id"])
        router.control(.get, "/__mock/events", .deferred(events.list),
                   summary: "The event feed, long-polled", reads: ["after", "wait", "type", "limit"])
        let log = NotificationsEndpoint(notifications: notifications)
        router.control(.get, "/__mock/notifications", .deferred(log.list),
                   summary: "The notification delivery log, long-polled", reads: ["after", "wait"])
        router.control(.delete, "/__mock/notifications", .deferred(log.clear), summary: "Clears settled notifications (and pending ones with pending=cancel)",
                   reads: ["pending"])
        let faulty = FaultsEndpoint(domain: domain)
        router.control(.post, "/__mock/faults", .immediate(faulty.add),
                   summary: "Installs a fault on an Apple route or on notification delivery, or an incident's faults",
                   reads: FaultSpec.keys + ["minutes"])
        router.control(.get, "/__mock/faults", .immediate(faulty.list), summary: "The installed faults and how often each fired")
        router.control(.delete, "/__mock/faults", .immediate(faulty.removeAll),
                   summary: "Removes every fault, or every fault of one incident", reads: ["incident"])
        router.control(.get, "/__mock/faults/{id}", .immediate(faulty.show), summary: "One fault and how often it fired")
        router.control(.delete, "/__mock/faults/{id}", .immediate(faulty.remove), summary: "Removes one fault")
        let journaled = RequestsEndpoint(journal: journal)
        let filters = RequestsEndpoint.filterFields
        router.control(.get, "/__mock/requests", .deferred(journaled.list),
                   summary: "The request journal: what the mock received and answered, long-polled", reads: filters + ["limit", "wait"])
        router.control(.get, "/__mock/requests/count", .deferred(journaled.count),
                   summary: "How many journaled requests match (\"exactly once\")", reads: filters)
        router.control(.delete, "/__mock/requests", .immediate(journaled.clear), summary: "Forgets every journaled request")
        let mailbox = MailEndpoint(mailbox: mail)
        router.control(.get, "/__mock/mail", .deferred(mailbox.list),
                   summary: "What the SMTP port received, with the relay's verdicts, long-polled", reads: ["after", "limit", "wait"])
        router.control(.delete, "/__mock/mail", .immediate(mailbox.clear), summary: "Forgets every message")
        router.control(.get, "/__mock/mail/{id}", .deferred(mailbox.show), summary: "One message, decoded")
        router.control(.get, "/__mock/mail/{id}/raw", .immediate(mailbox.raw), summary: "One message's bytes as received")
        // The dashboard last: its requests filter suggests every route above.
        let dashboard = DashboardEndpoint(domain: domain, notifications: notifications, journal: journal, mail: mail,
                                          routes: router.templates + [DashboardEndpoint.dataPath])
        router.control(.get, DashboardEndpoint.barePath, .immediate(dashboard.redirect), summary: "Redirects to the dashboard")
        router.control(.get, DashboardEndpoint.shellPath, .immediate(dashboard.shell),
                   summary: "The dashboard: a page to see and drive the mock from a browser")
        router.control(.get, DashboardEndpoint.scriptPath, .immediate(dashboard.script), summary: "The dashboard's script")
        router.control(.get, DashboardEndpoint.stylePath, .immediate(dashboard.style), summary: "The dashboard's style sheet")
        // Rendering a thousand users takes milliseconds: deferred, off the I/O threads.
        router.control(.get, DashboardEndpoint.dataPath, .deferred(dashboard.data),
                   summary: "The dashboard's data: every section as one HTML fragment", reads: ["route", "client"])
        return router.build()
    }
}
