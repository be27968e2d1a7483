import MiniHTTP

/// The one place requests reach the log and the journal: at `info`, a line for each request
/// Apple's endpoints refused, with the reason the refusal carries (Apple's answer itself stays
/// bare); at `debug`, a line for every answered request. With `journal`, each handler's answer
/// carries a `JournalNote` for the request journal: the refusal's code and reason, and the
/// events its operations recorded. Below `info` and without the journal handlers run unwrapped;
/// at `info`, successes cost nothing but a `do`.
struct RequestLog: Sendable {
    /// Which lines to write.
    let level: AppleIDMockLogLevel
    /// Where they go (the configuration's `log`).
    let sink: @Sendable (String) -> Void
    /// Whether answers carry notes for the request journal.
    var journal = false
    /// With a state file: the barrier every deferred answer waits at (what an operation changed
    /// is committed before any answer that depends on it is sent).
    var committing: CommitBarrier? = nil

    /// A log that writes nothing (route tables built without a configuration's log).
    static let silent = RequestLog(level: .error, sink: { _ in })

    /// An Apple endpoint at `path`: refusals (`OAuthError`, `AuthorizeError`) are logged with
    /// their reason, then answered as they always are.
    func apple(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) -> HTTPHandler {
        guard level >= .info || journal || committing != nil else { return .deferred(handler) }
        let (debug, info, journal, committing) = (level >= .debug, level >= .info, journal, committing)
        return .deferred { [sink] request in
            let events = journal ? EventCollector() : nil
            let outcome = Result { try EventCollector.$current.withValue(events) { try handler(request) } }
            // What the answer depends on is committed first (a refusal too: it may depend on what
            // another operation changed, a code it redeemed); when it cannot be, Apple's 503.
            do throws(CommitFailure) {
                try await committing?.settle()
            } catch {
                if info { sink(Self.refused(request, path, code: "temporarily_unavailable", reason: error.description)) }
                return Self.noted(Self.appleUnavailable(path, error),
                                  JournalNote(error: "temporarily_unavailable", reason: error.description, events: events?.sequences ?? []))
            }
            do {
                var response = try outcome.get()
                if debug { sink(Self.answered(request, path, response.status)) }
                // A handler's notice on an answer it gives all the same (a same-site form_post):
                // one line at info, and the journal entry's reason.
                let notice = (response.note as? JournalNote)?.reason
                if info, let notice { sink(LogText.escaped("notice \(LogText.clip(request.method.rawValue)) \(path): \(notice)")) }
                response.note = events.map { JournalNote(reason: notice, events: $0.sequences) }
                return response
            } catch {
                guard let refusal = Self.refusal(error) else {
                    if debug { sink(Self.answered(request, path, Self.status(error))) }
                    throw error
                }
                if info { sink(Self.refused(request, path, code: refusal.code, reason: refusal.reason)) }
                guard let events else { throw error }
                return Self.noted(refusal.response, JournalNote(error: refusal.code, reason: refusal.reason, events: events.sequences))
            }
        }
    }

    /// Apple's answer when the state file cannot take what an answer depends on: its error page
    /// for the authorize page, `{"error": "temporarily_unavailable"}` for the JSON endpoints, 503.
    static func appleUnavailable(_ path: String, _ failure: CommitFailure) -> HTTPResponse {
        guard path != "/auth/authorize" else {
            var refusal = AuthorizeError(code: "temporarily_unavailable", message: "The service is temporarily unavailable. Please try again later.",
                                         field: "state", reason: failure.description)
            refusal.rendering = .unavailable
            return refusal.response
        }
        return AppleResponse.noStoreJSON(["error": "temporarily_unavailable"], status: .serviceUnavailable)
    }

    /// The control API's answer when the state file cannot take what an answer depends on: 503
    /// with the reason (`state file: not writable (disk full)`).
    static func controlUnavailable(_ failure: CommitFailure) -> HTTPResponse {
        ControlResponse.error(failure.description + "; the change is kept and committed once the file takes it again", field: nil,
                              status: .serviceUnavailable)
    }

    /// This log, with answers that wait for no commit: for `/__mock/health`, which answers at
    /// once whatever the writer is doing (it waited minutes behind a compaction).
    var withoutCommitWait: RequestLog {
        var log = self
        log.committing = nil
        return log
    }

    /// Apple's code, the reason and the answer of a refusal by Apple's endpoints (`OAuthError`,
    /// `AuthorizeError`, and `POST /__mock/authorize`'s `HeadlessAuthorizeRefusal`, which says what
    /// Apple's authorize endpoint would refuse with); nil for any other error.
    private static func refusal(_ error: any Error) -> (code: String, reason: String, response: HTTPResponse)? {
        if let refusal = error as? OAuthError { return (refusal.code, refusal.reason ?? refusal.description, refusal.response) }
        if let refusal = error as? AuthorizeError { return (refusal.answeredCode, refusal.reason ?? refusal.message, refusal.response) }
        if let refusal = error as? HeadlessAuthorizeRefusal {
            return (refusal.error.code, refusal.error.reason ?? refusal.error.message, refusal.response)
        }
        return nil
    }

    /// Any other route at `path` (nil: the request's own, for the not-found handler): its
    /// answers are logged at `debug`; with `journal`, a deferred one's events are noted.
    func other(_ path: String?, _ handler: HTTPHandler) -> HTTPHandler {
        let debug = level >= .debug
        switch handler {
        case .immediate(let body) where committing != nil && (path ?? "").hasPrefix(ControlResponse.prefix):
            // With a state file, a control route's answer (the clock, the keys, health's kid) waits
            // for the commit of what it read, off the loop. Apple's /auth/keys stays on the loop:
            // the state owner gives it a key set only once committed.
            return other(path, .deferred { request in try body(request) })
        case .immediate(let body):
            guard debug else { return handler }
            return .immediate { [sink] request in
                do {
                    let response = try body(request)
                    sink(Self.answered(request, path, response.status))
                    return response
                } catch {
                    sink(Self.answered(request, path, Self.status(error)))
                    throw error
                }
            }
        case .deferred(let body):
            guard debug || journal || committing != nil else { return handler }
            let (journal, committing) = (journal, committing)
            return .deferred { [sink] request in
                let events = journal ? EventCollector() : nil
                let outcome: Result<HTTPResponse, any Error>
                do {
                    outcome = .success(try await EventCollector.$current.withValue(events) { try await body(request) })
                } catch {
                    outcome = .failure(error)
                }
                do throws(CommitFailure) {
                    try await committing?.settle()
                } catch {
                    if debug { sink(Self.answered(request, path, .serviceUnavailable)) }
                    return Self.noted(Self.controlUnavailable(error), JournalNote(reason: error.description, events: events?.sequences ?? []))
                }
                do {
                    var response = try outcome.get()
                    if debug { sink(Self.answered(request, path, response.status)) }
                    if let events { response.note = JournalNote(events: events.sequences) }
                    return response
                } catch {
                    if debug { sink(Self.answered(request, path, Self.status(error))) }
                    guard let events, let known = error as? any HTTPResponseError else { throw error }
                    // A refusal after part of the work (a reset that failed late) still names its events;
                    // one that speaks for Apple's (a headless authorize) names Apple's code and why.
                    let apple = Self.refusal(error)
                    return Self.noted(known.response, JournalNote(error: apple?.code, reason: apple?.reason, events: events.sequences))
                }
            }
        }
    }

    /// `response` carrying `note`.
    private static func noted(_ response: HTTPResponse, _ note: JournalNote) -> HTTPResponse {
        var response = response
        response.note = note
        return response
    }

    /// `refused POST /auth/token: invalid_client — <reason>`, escaped and bounded.
    static func refused(_ request: HTTPRequest, _ path: String, code: String, reason: String) -> String {
        LogText.escaped("refused \(LogText.clip(request.method.rawValue)) \(path): \(code) — \(reason)")
    }

    /// `answered GET /auth/keys: 200`.
    static func answered(_ request: HTTPRequest, _ path: String?, _ status: HTTPStatus) -> String {
        LogText.escaped("answered \(LogText.clip(request.method.rawValue)) \(path ?? LogText.clip(request.path)): \(status.code)")
    }

    /// The status a thrown error is answered with (MiniHTTP's rule: a 500 unless it knows better).
    private static func status(_ error: any Error) -> HTTPStatus {
        (error as? any HTTPResponseError)?.response.status ?? .internalServerError
    }
}
