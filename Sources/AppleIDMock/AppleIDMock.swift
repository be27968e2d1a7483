import MiniHTTP

/// A running mock of appleid.apple.com. The CLI and the tests both start it through
/// `start(_:)`, so tests exercise the wiring users run. Import `AppleIDMock` into a Swift test
/// suite to run it in-process.
public final class AppleIDMockServer: Sendable {
    /// The HTTP server underneath.
    public let http: HTTPServer
    /// The Apple domain: scenario, clock, keys and all state.
    public let domain: AppleIDDomain
    /// The address clients use (discovery URLs are built from it).
    public let baseURL: String

    private init(http: HTTPServer, domain: AppleIDDomain, baseURL: String) {
        self.http = http
        self.domain = domain
        self.baseURL = baseURL
    }

    /// Loads keys, binds, and starts serving; returns once connections are accepted.
    public static func start(_ configuration: AppleIDMockConfiguration = AppleIDMockConfiguration()) throws(AppleIDMockError) -> AppleIDMockServer {
        let domain = try AppleIDDomain(configuration: configuration)
        let site = SiteAddress()
        var http = configuration.http
        http.host = configuration.host
        http.port = configuration.port
        let server: HTTPServer
        do {
            server = try HTTPServer.start(configuration: http, routes: Routes.table(domain: domain, site: site))
        } catch {
            throw .bind(error)
        }
        let baseURL = configuration.baseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? Self.defaultBaseURL(server)
        site.set(baseURL)
        return AppleIDMockServer(http: server, domain: domain, baseURL: baseURL)
    }

    /// The bound port.
    public var port: Int { http.port }

    /// `http://HOST:PORT` as bound.
    public var listenURL: String { http.url }

    /// Stops accepting, finishes in-flight requests; returns at once.
    public func shutdown() { http.shutdown() }

    /// Blocks until stopped (not for async code).
    public func waitUntilStopped() { http.waitUntilStopped() }

    /// Suspends until stopped.
    public func stopped() async { await http.stopped() }

    /// `shutdown()` and wait.
    public func stop() { http.stop() }

    private static func defaultBaseURL(_ server: HTTPServer) -> String {
        switch server.host {
        case "0.0.0.0", "::": "http://localhost:\(server.port)"
        default: server.url
        }
    }
}
