import MiniHTTP

/// The one list of every path the mock serves.
enum Routes {
    /// Builds the immutable route table over `domain`; `requests` says on the log why Apple's
    /// endpoints refused a request (and, at `debug`, what every route answered).
    static func table(domain: AppleIDDomain, site: SiteAddress, control: ControlGuard, notifications: NotificationDeliverer? = nil,
                      requests: RequestLog = .silent, journal: RequestJournal? = nil, mail: MailBox? = nil) -> RouteTable {
        var router = Router()
        // Faults act on Apple's routes only, never on /__mock.
        let faults = FaultGate(domain: domain)
        // Apple's endpoints (apple-reference.md §1.1). Signing costs CPU, so handlers that sign
        // run deferred, off the I/O threads.
        let authorize = AuthorizeEndpoint(domain: domain)
        let authorizeParameters = ["client_id", "redirect_uri", "response_type", "response_mode", "scope", "state", "nonce",
                                   "code_challenge", "code_challenge_method"]
        router.add(.get, "/auth/authorize", apple: authorize.show, logging: requests, faults: faults, summary: "Apple's sign-in page: validates the request, shows consent",
                   reads: authorizeParameters)
        router.add(.post, "/auth/authorize", apple: authorize.decide, logging: requests, faults: faults, summary: "The consent page's answer: delivers code, id_token, state and user",
                   reads: authorizeParameters + ["mock_user", "mock_email", "mock_given_name", "mock_family_name", "mock_action"])
        router.add(.post, "/auth/token", apple: TokenEndpoint(domain: domain).handle, logging: requests, faults: faults,
                   summary: "Exchanges a code or refresh token, or issues a client_credentials token",
                   reads: ["client_id", "client_secret", "grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope"])
        // Revoke and migration parse forms and check signatures: off the I/O threads too (probe F4).
        router.add(.post, "/auth/revoke", apple: RevokeEndpoint(domain: domain).handle, logging: requests, faults: faults,
                   summary: "Revokes a token and the user's consent for the app group", reads: ["client_id", "client_secret", "token"])
        router.add(.get, "/auth/keys", appleLogging: requests, faults: faults, .immediate(KeysEndpoint(domain: domain).handle), summary: "The published signing keys (JWKS)")
        router.add(.post, "/auth/usermigrationinfo", apple: MigrationEndpoint(domain: domain).handle, logging: requests, faults: faults,
                   summary: "Team transfer: transfer_sub for the sending team, sub for the receiving one",
                   reads: ["client_id", "client_secret", "sub", "target", "transfer_sub"])
        router.add(.get, "/.well-known/openid-configuration", appleLogging: requests, faults: faults, .immediate(DiscoveryEndpoint(domain: domain, site: site).handle),
                   summary: "The OpenID discovery document")
        // Control API: local, same-origin, JSON callers only (ControlGuard).
        // Health answers at once, whatever the state file's writer is doing (it names the committed signer).
        router.add(.get, "/__mock/health", logging: requests.withoutCommitWait, control.wrap(.immediate(HealthEndpoint(domain: domain).handle)),
                   summary: "Whether the mock is up, and the signing kid")
        router.add(.get, "/__mock/openapi.json", logging: requests, control.wrap(.immediate(OpenAPIEndpoint().handle)), summary: "The OpenAPI 3.1 contract of every route")
        router.add(.post, "/__mock/id-token", logging: requests, control.wrap(.deferred(IdentityTokenEndpoint(domain: domain).handle)),
                   summary: "Mints an id_token as a sign-in would, changing nothing", reads: ["user", "client_id", "nonce", "hide_email"])
        router.add(.post, "/__mock/authorize", logging: requests, control.wrap(.deferred(HeadlessAuthorizeEndpoint(domain: domain).handle)),
                   summary: "The web authorize flow without a browser", reads: HeadlessAuthorizeEndpoint.parameterFields + HeadlessAuthorizeEndpoint.choiceFields)
        router.add(.post, "/__mock/sign-in", logging: requests, control.wrap(.deferred(SignInEndpoint(domain: domain).handle)),
                   summary: "A native (iOS) sign-in: the credential an app receives", reads: SignInEndpoint.fields)
        router.add(.post, "/__mock/tokens", logging: requests, control.wrap(.deferred(TokensEndpoint(domain: domain).handle)),
                   summary: "Forges an id_token or notification JWT, genuine or with one defect", reads: TokensEndpoint.fields)
        let clock = ClockEndpoint(domain: domain)
        router.add(.get, "/__mock/clock", logging: requests, control.wrap(.immediate(clock.show)), summary: "The mock clock")
        // Moving the clock may run the key rotation pattern, which generates RSA keys: deferred.
        router.add(.post, "/__mock/clock", logging: requests, control.wrap(.deferred(clock.move)),
                   summary: "Advances, sets or freezes the mock clock (rotations follow)", reads: ["advance", "set", "freeze"])
        let keys = KeysControlEndpoint(domain: domain)
        router.add(.get, "/__mock/keys", logging: requests, control.wrap(.immediate(keys.list)), summary: "Every key the mock has known, with its state")
        router.add(.post, "/__mock/keys", logging: requests, control.wrap(.deferred(keys.publish)),
                   summary: "Publishes a key (given or generated) without signing with it", reads: ["kid", "pem"])
        router.add(.post, "/__mock/keys/rotate", logging: requests, control.wrap(.deferred(keys.rotate)), summary: "One rotation step: a fresh key published and signing")
        router.add(.post, "/__mock/keys/{kid}/activate", logging: requests, control.wrap(.deferred(keys.activate)), summary: "Makes a published key sign new tokens")
        router.add(.delete, "/__mock/keys/{kid}", logging: requests, control.wrap(.deferred(keys.retire)), summary: "Retires a key from /auth/keys")
        let users = UsersEndpoint(domain: domain)
        router.add(.get, "/__mock/users", logging: requests, control.wrap(.deferred(users.list)), summary: "Every user with account state")
        router.add(.post, "/__mock/users", logging: requests, control.wrap(.deferred(users.add)),
                   summary: "Adds a user at run time", reads: ["id", "email", "given_name", "family_name", "hide_email", "real_user_status", "relay_domain"])
        router.add(.post, "/__mock/reset", logging: requests, control.wrap(.deferred(ResetEndpoint(domain: domain).handle)),
                   summary: "Back to the scenario's initial state; queued notifications abandoned")
        router.add(.get, "/__mock/credential-state", logging: requests, control.wrap(.deferred(CredentialStateEndpoint(domain: domain).handle)),
                   summary: "What getCredentialState answers on a device", reads: ["user", "client_id"])
        let events = EventsEndpoint(domain: domain, notifications: notifications)
        router.add(.post, "/__mock/events", logging: requests, control.wrap(.deferred(events.handle)),
                   summary: "A user's action at Apple; its notifications follow", reads: ["type", "user", "client_id"])
        router.add(.get, "/__mock/events", logging: requests, control.wrap(.deferred(events.list)),
                   summary: "The event feed, long-polled", reads: ["after", "wait", "type", "limit"])
        let log = NotificationsEndpoint(notifications: notifications)
        router.add(.get, "/__mock/notifications", logging: requests, control.wrap(.deferred(log.list)),
                   summary: "The notification delivery log, long-polled", reads: ["after", "wait"])
        router.add(.delete, "/__mock/notifications", logging: requests, control.wrap(.deferred(log.clear)), summary: "Clears settled notifications (and pending ones with pending=cancel)",
                   reads: ["pending"])
        let faulty = FaultsEndpoint(domain: domain)
        router.add(.post, "/__mock/faults", logging: requests, control.wrap(.immediate(faulty.add)),
                   summary: "Installs a fault on an Apple route or on notification delivery, or an incident's faults",
                   reads: FaultSpec.keys + ["minutes"])
        router.add(.get, "/__mock/faults", logging: requests, control.wrap(.immediate(faulty.list)), summary: "The installed faults and how often each fired")
        router.add(.delete, "/__mock/faults", logging: requests, control.wrap(.immediate(faulty.removeAll)),
                   summary: "Removes every fault, or every fault of one incident", reads: ["incident"])
        router.add(.get, "/__mock/faults/{id}", logging: requests, control.wrap(.immediate(faulty.show)), summary: "One fault and how often it fired")
        router.add(.delete, "/__mock/faults/{id}", logging: requests, control.wrap(.immediate(faulty.remove)), summary: "Removes one fault")
        let journaled = RequestsEndpoint(journal: journal)
        let filters = RequestsEndpoint.filterFields
        router.add(.get, "/__mock/requests", logging: requests, control.wrap(.deferred(journaled.list)),
                   summary: "The request journal: what the mock received and answered, long-polled", reads: filters + ["limit", "wait"])
        router.add(.get, "/__mock/requests/count", logging: requests, control.wrap(.deferred(journaled.count)),
                   summary: "How many journaled requests match (\"exactly once\")", reads: filters)
        router.add(.delete, "/__mock/requests", logging: requests, control.wrap(.immediate(journaled.clear)), summary: "Forgets every journaled request")
        let mailbox = MailEndpoint(mailbox: mail)
        router.add(.get, "/__mock/mail", logging: requests, control.wrap(.deferred(mailbox.list)),
                   summary: "What the SMTP port received, with the relay's verdicts, long-polled", reads: ["after", "limit", "wait"])
        router.add(.delete, "/__mock/mail", logging: requests, control.wrap(.immediate(mailbox.clear)), summary: "Forgets every message")
        router.add(.get, "/__mock/mail/{id}", logging: requests, control.wrap(.deferred(mailbox.show)), summary: "One message, decoded")
        router.add(.get, "/__mock/mail/{id}/raw", logging: requests, control.wrap(.immediate(mailbox.raw)), summary: "One message's bytes as received")
        // The dashboard last: its requests filter suggests every route above.
        let dashboard = DashboardEndpoint(domain: domain, notifications: notifications, journal: journal, mail: mail,
                                          routes: router.build().routes.map(\.template).sorted() + [DashboardEndpoint.dataPath])
        router.add(.get, DashboardEndpoint.barePath, logging: requests, control.wrap(.immediate(dashboard.redirect)), summary: "Redirects to the dashboard")
        router.add(.get, DashboardEndpoint.shellPath, logging: requests, control.wrap(.immediate(dashboard.shell)),
                   summary: "The dashboard: a page to see and drive the mock from a browser")
        router.add(.get, DashboardEndpoint.scriptPath, logging: requests, control.wrap(.immediate(dashboard.script)), summary: "The dashboard's script")
        router.add(.get, DashboardEndpoint.stylePath, logging: requests, control.wrap(.immediate(dashboard.style)), summary: "The dashboard's style sheet")
        // Rendering a thousand users takes milliseconds: deferred, off the I/O threads.
        router.add(.get, DashboardEndpoint.dataPath, logging: requests, control.wrap(.deferred(dashboard.data)),
                   summary: "The dashboard's data: every section as one HTML fragment", reads: ["route", "client"])
        // Under /__mock/, what no route takes is answered in the control API's JSON behind the
        // guard: 404, and 405 for a route asked with another method. Apple's paths keep
        // MiniHTTP's answers.
        router.setFallbacks(under: ControlResponse.prefix, notFound: requests.other(nil, control.wrap(.immediate { request in
            ControlResponse.notFound(request)
        })), methodNotAllowed: { allow in requests.other(nil, control.wrap(.immediate { _ in ControlResponse.methodNotAllowed(allow) })) })
        router.setNotFound(requests.other(nil, .immediate { _ in .plainError(.notFound) }))
        return router.build()
    }
}
