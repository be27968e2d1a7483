import MiniHTTP

/// The one list of every path the mock serves.
enum Routes {
    /// Builds the immutable route table over `domain`.
    static func table(domain: AppleIDDomain, site: SiteAddress) -> RouteTable {
        var router = Router()
        // Apple's endpoints (apple-reference.md §1.1). Signing costs CPU, so handlers that sign
        // run deferred, off the I/O threads.
        let authorize = AuthorizeEndpoint(domain: domain)
        router.add(.get, "/auth/authorize", deferred: authorize.show)
        router.add(.post, "/auth/authorize", deferred: authorize.decide)
        router.add(.post, "/auth/token", deferred: TokenEndpoint(domain: domain).handle)
        router.add(.post, "/auth/revoke", immediate: RevokeEndpoint(domain: domain).handle)
        router.add(.get, "/auth/keys", immediate: KeysEndpoint(domain: domain).handle)
        router.add(.post, "/auth/usermigrationinfo", immediate: MigrationEndpoint(domain: domain).handle)
        router.add(.get, "/.well-known/openid-configuration", immediate: DiscoveryEndpoint(domain: domain, site: site).handle)
        // Control API.
        router.add(.get, "/__mock/health", immediate: HealthEndpoint(domain: domain).handle)
        router.add(.post, "/__mock/id-token", deferred: IdentityTokenEndpoint(domain: domain).handle)
        router.add(.post, "/__mock/authorize", deferred: HeadlessAuthorizeEndpoint(domain: domain).handle)
        router.add(.post, "/__mock/sign-in", deferred: SignInEndpoint(domain: domain).handle)
        return router.build()
    }
}
