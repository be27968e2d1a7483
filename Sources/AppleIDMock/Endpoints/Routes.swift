import MiniHTTP

/// The one list of every path the mock serves.
enum Routes {
    /// Builds the immutable route table over `domain`.
    static func table(domain: AppleIDDomain, site: SiteAddress, control: ControlGuard, notifications: NotificationDeliverer? = nil) -> RouteTable {
        var router = Router()
        // Apple's endpoints (apple-reference.md §1.1). Signing costs CPU, so handlers that sign
        // run deferred, off the I/O threads.
        let authorize = AuthorizeEndpoint(domain: domain)
        router.add(.get, "/auth/authorize", deferred: authorize.show)
        router.add(.post, "/auth/authorize", deferred: authorize.decide)
        router.add(.post, "/auth/token", deferred: TokenEndpoint(domain: domain).handle)
        // Revoke and migration parse forms and check signatures: off the I/O threads too (probe F4).
        router.add(.post, "/auth/revoke", deferred: RevokeEndpoint(domain: domain).handle)
        router.add(.get, "/auth/keys", immediate: KeysEndpoint(domain: domain).handle)
        router.add(.post, "/auth/usermigrationinfo", deferred: MigrationEndpoint(domain: domain).handle)
        router.add(.get, "/.well-known/openid-configuration", immediate: DiscoveryEndpoint(domain: domain, site: site).handle)
        // Control API: local, same-origin, JSON callers only (ControlGuard).
        router.add(.get, "/__mock/health", control.wrap(.immediate(HealthEndpoint(domain: domain).handle)))
        router.add(.post, "/__mock/id-token", control.wrap(.deferred(IdentityTokenEndpoint(domain: domain).handle)))
        router.add(.post, "/__mock/authorize", control.wrap(.deferred(HeadlessAuthorizeEndpoint(domain: domain).handle)))
        router.add(.post, "/__mock/sign-in", control.wrap(.deferred(SignInEndpoint(domain: domain).handle)))
        let clock = ClockEndpoint(domain: domain)
        router.add(.get, "/__mock/clock", control.wrap(.immediate(clock.show)))
        // Moving the clock may run the key rotation pattern, which generates RSA keys: deferred.
        router.add(.post, "/__mock/clock", control.wrap(.deferred(clock.move)))
        let keys = KeysControlEndpoint(domain: domain)
        router.add(.get, "/__mock/keys", control.wrap(.immediate(keys.list)))
        router.add(.post, "/__mock/keys", control.wrap(.deferred(keys.publish)))
        router.add(.post, "/__mock/keys/rotate", control.wrap(.deferred(keys.rotate)))
        let users = UsersEndpoint(domain: domain)
        router.add(.get, "/__mock/users", control.wrap(.deferred(users.list)))
        router.add(.post, "/__mock/users", control.wrap(.deferred(users.add)))
        router.add(.post, "/__mock/reset", control.wrap(.deferred(ResetEndpoint(domain: domain).handle)))
        router.add(.get, "/__mock/credential-state", control.wrap(.deferred(CredentialStateEndpoint(domain: domain).handle)))
        router.add(.post, "/__mock/events", control.wrap(.deferred(EventsEndpoint(domain: domain, notifications: notifications).handle)))
        let log = NotificationsEndpoint(notifications: notifications)
        router.add(.get, "/__mock/notifications", control.wrap(.deferred(log.list)))
        router.add(.delete, "/__mock/notifications", control.wrap(.deferred(log.clear)))
        // Paths with a kid in them: /__mock/keys/{kid}/activate and /__mock/keys/{kid}.
        router.setNotFound(.deferred { request in
            guard request.path.hasPrefix(KeysControlEndpoint.prefix) else { return .plainError(.notFound) }
            if let refused = control.refusal(request) { return refused }
            return try keys.route(request) ?? .plainError(.notFound)
        })
        return router.build()
    }
}
