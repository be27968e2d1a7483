import MiniHTTP

/// The dashboard: a page at `/__mock/` to look at the mock and drive it from a browser.
///
/// - `GET /__mock/` → the page's shell: static HTML with the section skeleton, the forms and a
///   token form, no state; `GET /__mock/dashboard.js` and `/__mock/dashboard.css` → its script
///   and style sheet (compiled in from `Control/Dashboard/`). These three answer without the
///   control token, since a browser's navigation cannot carry one (`ControlGuard`), but keep the
///   Host and Origin checks. `GET /__mock` redirects to the shell.
/// - `GET /__mock/dashboard[?route=&client=]` → the data: one HTML fragment of every section,
///   rendered on the server with every value escaped, behind the whole guard (token included).
///
/// The page's buttons call the control API the tests and the CLI use (`data-method`,
/// `data-path`, `data-body`); the dashboard adds no other way into the state.
struct DashboardEndpoint: Sendable {
    /// The shell.
    static let shellPath = "/__mock/"
    /// The bare control prefix, which redirects to the shell.
    static let barePath = "/__mock"
    /// The data fragment.
    static let dataPath = "/__mock/dashboard"
    /// The script.
    static let scriptPath = "/__mock/dashboard.js"
    /// The style sheet.
    static let stylePath = "/__mock/dashboard.css"
    /// Every path the dashboard serves.
    static let paths: Set<String> = [barePath, shellPath, dataPath, scriptPath, stylePath]
    /// The paths that answer without the control token: static bytes, no state.
    static let tokenFreePaths: Set<String> = [barePath, shellPath, scriptPath, stylePath]

    /// The page may load its own script, style sheet and data and nothing else: no inline
    /// script or style, no other origin, no framing, no form posting elsewhere.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The state the users, keys, clock and events sections show.
    let domain: AppleIDDomain
    /// The delivery log; nil in a mock without one.
    let notifications: NotificationDeliverer?
    /// The request journal; nil with `--journal off`.
    let journal: RequestJournal?
    /// What the SMTP port received.
    let mail: MailBox?
    /// The scenario's teams, app groups and clients, and the route templates.
    let directory: DashboardDirectory

    /// The dashboard over the mock's parts; `routes` are the route templates its requests filter suggests.
    init(domain: AppleIDDomain, notifications: NotificationDeliverer?, journal: RequestJournal?, mail: MailBox?, routes: [String]) {
        self.domain = domain
        self.notifications = notifications
        self.journal = journal
        self.mail = mail
        directory = DashboardDirectory(domain: domain, routes: routes)
    }

    /// `GET /__mock/`.
    func shell(_ request: HTTPRequest) -> HTTPResponse { Self.shellResponse }

    /// `GET /__mock/dashboard.js`.
    func script(_ request: HTTPRequest) -> HTTPResponse { Self.scriptResponse }

    /// `GET /__mock/dashboard.css`.
    func style(_ request: HTTPRequest) -> HTTPResponse { Self.styleResponse }

    /// `GET /__mock`: to the shell.
    func redirect(_ request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(status: .found, headers: ["Location": Self.shellPath, "Cache-Control": "no-store"])
    }

    /// `GET /__mock/dashboard`: every section as one HTML fragment.
    func data(_ request: HTTPRequest) throws -> HTTPResponse {
        let query = try DashboardQuery(request)
        let snapshot = DashboardSnapshot(domain: domain, notifications: notifications, journal: journal, mailbox: mail, query: query)
        var fragment = DashboardFragment(snapshot: snapshot, directory: directory, query: query)
        return HTTPResponse(status: .ok, headers: Self.headers("text/html; charset=utf-8", cache: "no-store"), body: fragment.render())
    }

    /// The headers of every dashboard answer.
    static func headers(_ contentType: String, cache: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add("Content-Type", contentType)
        headers.add("Cache-Control", cache)
        headers.add("Content-Security-Policy", contentSecurityPolicy)
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("X-Frame-Options", "DENY")
        headers.add("Referrer-Policy", "no-referrer")
        return headers
    }

    // The assets change only with the binary; `no-cache` has a browser ask again, never use a stale copy.
    private static let shellResponse = HTTPResponse(status: .ok, headers: headers("text/html; charset=utf-8", cache: "no-store"),
                                                    body: PackageResources.dashboard_html)
    private static let scriptResponse = HTTPResponse(status: .ok, headers: headers("text/javascript; charset=utf-8", cache: "no-cache"),
                                                     body: PackageResources.dashboard_js)
    private static let styleResponse = HTTPResponse(status: .ok, headers: headers("text/css; charset=utf-8", cache: "no-cache"),
                                                    body: PackageResources.dashboard_css)
}
