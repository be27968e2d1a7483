import MiniHTTP

/// The one list of every path the mock serves.
enum Routes {
    /// Builds the immutable route table over `domain`.
    static func table(domain: AppleIDDomain, site: SiteAddress) -> RouteTable {
        var router = Router()
        // Apple's endpoints (apple-reference.md §1.1).
        router.add(.get, "/auth/keys", immediate: KeysEndpoint(domain: domain).handle)
        router.add(.get, "/.well-known/openid-configuration", immediate: DiscoveryEndpoint(domain: domain, site: site).handle)
        // Control API.
        router.add(.get, "/__mock/health", immediate: HealthEndpoint(domain: domain).handle)
        router.add(.post, "/__mock/id-token", deferred: IdentityTokenEndpoint(domain: domain).handle)
        return router.build()
    }
}
