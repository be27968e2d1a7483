import MiniHTTP

/// The one list of every path the mock serves.
enum Routes {
    /// Builds the immutable route table over `domain`; `requests` says on the log why Apple's
    /// endpoints refused a request (and, at `debug`, what every route answered).
    static func table(domain: AppleIDDomain, site: SiteAddress, control: ControlGuard, notifications: NotificationDeliverer? = nil,
                      requests: RequestLog = .silent) -> RouteTable {
        var router = Router()
        // Apple's endpoints (apple-reference.md §1.1). Signing costs CPU, so handlers that sign
        // run deferred, off the I/O threads.
        let authorize = AuthorizeEndpoint(domain: domain)
        router.add(.get, "/auth/authorize", apple: authorize.show, logging: requests)
        router.add(.post, "/auth/authorize", apple: authorize.decide, logging: requests)
        router.add(.post, "/auth/token", apple: TokenEndpoint(domain: domain).handle, logging: requests)
        // Revoke and migration parse forms and check signatures: off the I/O threads too (probe F4).
        router.add(.post, "/auth/revoke", apple: RevokeEndpoint(domain: domain).handle, logging: requests)
        router.add(.get, "/auth/keys", logging: requests, .immediate(KeysEndpoint(domain: domain).handle))
        router.add(.post, "/auth/usermigrationinfo", apple: MigrationEndpoint(domain: domain).handle, logging: requests)
        router.add(.get, "/.well-known/openid-configuration", logging: requests, .immediate(DiscoveryEndpoint(domain: domain, site: site).handle))
        // Control API: local, same-origin, JSON callers only (ControlGuard).
        router.add(.get, "/__mock/health", logging: requests, control.wrap(.immediate(HealthEndpoint(domain: domain).handle)))
        router.add(.post, "/__mock/id-token", logging: requests, control.wrap(.deferred(IdentityTokenEndpoint(domain: domain).handle)))
        router.add(.post, "/__mock/authorize", logging: requests, control.wrap(.deferred(HeadlessAuthorizeEndpoint(domain: domain).handle)))
        router.add(.post, "/__mock/sign-in", logging: requests, control.wrap(.deferred(SignInEndpoint(domain: domain).handle)))
        let clock = ClockEndpoint(domain: domain)
        router.add(.get, "/__mock/clock", logging: requests, control.wrap(.immediate(clock.show)))
        // Moving the clock may run the key rotation pattern, which generates RSA keys: deferred.
        router.add(.post, "/__mock/clock", logging: requests, control.wrap(.deferred(clock.move)))
        let keys = KeysControlEndpoint(domain: domain)
        router.add(.get, "/__mock/keys", logging: requests, control.wrap(.immediate(keys.list)))
        router.add(.post, "/__mock/keys", logging: requests, control.wrap(.deferred(keys.publish)))
        router.add(.post, "/__mock/keys/rotate", logging: requests, control.wrap(.deferred(keys.rotate)))
        router.add(.post, "/__mock/keys/{kid}/activate", logging: requests, control.wrap(.deferred(keys.activate)))
        router.add(.delete, "/__mock/keys/{kid}", logging: requests, control.wrap(.deferred(keys.retire)))
        let users = UsersEndpoint(domain: domain)
        router.add(.get, "/__mock/users", logging: requests, control.wrap(.deferred(users.list)))
        router.add(.post, "/__mock/users", logging: requests, control.wrap(.deferred(users.add)))
        router.add(.post, "/__mock/reset", logging: requests, control.wrap(.deferred(ResetEndpoint(domain: domain).handle)))
        router.add(.get, "/__mock/credential-state", logging: requests, control.wrap(.deferred(CredentialStateEndpoint(domain: domain).handle)))
        let events = EventsEndpoint(domain: domain, notifications: notifications)
        router.add(.post, "/__mock/events", logging: requests, control.wrap(.deferred(events.handle)))
        router.add(.get, "/__mock/events", logging: requests, control.wrap(.deferred(events.list)))
        let log = NotificationsEndpoint(notifications: notifications)
        router.add(.get, "/__mock/notifications", logging: requests, control.wrap(.deferred(log.list)))
        router.add(.delete, "/__mock/notifications", logging: requests, control.wrap(.deferred(log.clear)))
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
