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
        // Control API: local, same-origin, JSON callers only (ControlGuard). Each route is its
        // declaration (ControlOperations: method, path, fields, answers) and the handler that serves it.
        typealias Control = ControlOperations
        // Health answers at once, whatever the state file's writer is doing (it names the committed signer).
        router.control(Control.health, .immediate(HealthEndpoint(domain: domain).handle), waitsForCommit: false)
        router.control(Control.openapi, .immediate(OpenAPIEndpoint().handle))
        router.control(Control.mintIdentityToken, .deferred(IdentityTokenEndpoint(domain: domain).handle))
        router.control(Control.headlessAuthorize, .deferred(HeadlessAuthorizeEndpoint(domain: domain).handle))
        router.control(Control.nativeSignIn, .deferred(SignInEndpoint(domain: domain).handle))
        router.control(Control.forgeToken, .deferred(TokensEndpoint(domain: domain).handle))
        let clock = ClockEndpoint(domain: domain)
        router.control(Control.clock, .immediate(clock.show))
        // Moving the clock may run the key rotation pattern, which generates RSA keys: deferred.
        router.control(Control.moveClock, .deferred(clock.move))
        let keys = KeysControlEndpoint(domain: domain)
        router.control(Control.listKeys, .immediate(keys.list))
        router.control(Control.publishKey, .deferred(keys.publish))
        router.control(Control.rotateKeys, .deferred(keys.rotate))
        router.control(Control.activateKey, .deferred(keys.activate))
        router.control(Control.retireKey, .deferred(keys.retire))
        let users = UsersEndpoint(domain: domain)
        router.control(Control.listUsers, .deferred(users.list))
        router.control(Control.addUser, .deferred(users.add))
        router.control(Control.reset, .deferred(ResetEndpoint(domain: domain).handle))
        router.control(Control.credentialState, .deferred(CredentialStateEndpoint(domain: domain).handle))
        let events = EventsEndpoint(domain: domain, notifications: notifications)
        router.control(Control.accountEvent, .deferred(events.handle))
        router.control(Control.eventFeed, .deferred(events.list))
        let log = NotificationsEndpoint(notifications: notifications)
        router.control(Control.notificationLog, .deferred(log.list))
        router.control(Control.clearNotifications, .deferred(log.clear))
        let faulty = FaultsEndpoint(domain: domain)
        router.control(Control.addFault, .immediate(faulty.add))
        router.control(Control.listFaults, .immediate(faulty.list))
        router.control(Control.removeFaults, .immediate(faulty.removeAll))
        router.control(Control.showFault, .immediate(faulty.show))
        router.control(Control.removeFault, .immediate(faulty.remove))
        let journaled = RequestsEndpoint(journal: journal)
        router.control(Control.requestJournal, .deferred(journaled.list))
        router.control(Control.countRequests, .deferred(journaled.count))
        router.control(Control.clearRequestJournal, .immediate(journaled.clear))
        let mailbox = MailEndpoint(mailbox: mail)
        router.control(Control.mailList, .deferred(mailbox.list))
        router.control(Control.clearMail, .immediate(mailbox.clear))
        router.control(Control.showMail, .deferred(mailbox.show))
        router.control(Control.rawMail, .immediate(mailbox.raw))
        // The dashboard last: its requests filter suggests every route above.
        let dashboard = DashboardEndpoint(domain: domain, notifications: notifications, journal: journal, mail: mail,
                                          routes: router.templates + [Control.dashboardData.path])
        router.control(Control.dashboardRedirect, .immediate(dashboard.redirect))
        router.control(Control.dashboard, .immediate(dashboard.shell))
        router.control(Control.dashboardScript, .immediate(dashboard.script))
        router.control(Control.dashboardStyle, .immediate(dashboard.style))
        // Rendering a thousand users takes milliseconds: deferred, off the I/O threads.
        router.control(Control.dashboardData, .deferred(dashboard.data))
        return router.build()
    }
}
