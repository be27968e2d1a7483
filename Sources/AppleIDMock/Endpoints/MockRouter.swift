import MiniHTTP

/// The only way the mock's routes are made: every route goes through the request log (refusals
/// and answers on the log, the journal's notes) and, with a state file, answers only once what
/// it depends on is committed (`RequestLog.committing`, the barrier every deferred answer waits
/// at; an immediate control route is made deferred to wait there too). A route cannot be added
/// around it: `Routes` holds no `Router` of its own. Apple's routes get the installed faults and
/// `Server: Apple`; control routes get the control guard.
struct MockRouter {
    private var router = Router()
    private let log: RequestLog
    private let control: ControlGuard
    private let faults: FaultGate

    init(log: RequestLog, control: ControlGuard, faults: FaultGate) {
        self.log = log
        self.control = control
        self.faults = faults
    }

    /// An endpoint of Apple's at `method path` that may refuse (deferred: it signs, parses forms
    /// or checks signatures off the I/O threads). `summary` and `reads` (the fields it takes)
    /// describe the route in `RouteTable.routes`.
    mutating func apple(_ method: HTTPMethod, _ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse,
                        summary: String, reads: [String] = []) {
        router.add(method, path, AppleResponse.servedByApple(faults.gate(log.apple(path, handler))), summary: summary, reads: reads)
    }

    /// An endpoint of Apple's that refuses nothing and answers on the loop (the keys, discovery):
    /// what it serves is committed already.
    mutating func apple(_ method: HTTPMethod, _ path: String, immediate handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse,
                        summary: String) {
        router.add(method, path, AppleResponse.servedByApple(faults.gate(log.other(path, .immediate(handler)))), summary: summary)
    }

    /// A control route behind the guard, as `operation` declares it (method, path, summary, the
    /// fields it reads). `waitsForCommit` false only for health, which answers at once whatever
    /// the state file's writer is doing.
    mutating func control(_ operation: ControlOperation, _ handler: HTTPHandler, waitsForCommit: Bool = true) {
        let log = waitsForCommit ? log : log.withoutCommitWait
        router.add(operation.method, operation.path, log.other(operation.path, control.wrap(handler)), summary: operation.summary,
                   reads: operation.fieldNames)
    }

    /// Every template added so far, sorted.
    var templates: [String] { router.build().routes.map(\.template).sorted() }

    /// The table: under `/__mock/` what no route takes is answered in the control API's JSON
    /// behind the guard (404, and 405 for a route asked with another method); Apple's paths keep
    /// MiniHTTP's answers.
    func build() -> RouteTable {
        var router = router
        router.setFallbacks(under: ControlResponse.prefix, notFound: log.other(nil, control.wrap(.immediate { request in
            ControlResponse.notFound(request)
        })), methodNotAllowed: { [log, control] allow in log.other(nil, control.wrap(.immediate { _ in ControlResponse.methodNotAllowed(allow) })) })
        router.setNotFound(log.other(nil, .immediate { _ in .plainError(.notFound) }))
        return router.build()
    }
}
