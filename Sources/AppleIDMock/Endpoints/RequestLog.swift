import MiniHTTP

/// The one place requests reach the log: at `info`, a line for each request Apple's endpoints
/// refused, with the reason the refusal carries (Apple's answer itself stays bare); at `debug`,
/// a line for every answered request. Below `info` handlers run unwrapped, at `info` successes
/// cost nothing but a `do`.
struct RequestLog: Sendable {
    /// Which lines to write.
    let level: AppleIDMockLogLevel
    /// Where they go (the configuration's `log`).
    let sink: @Sendable (String) -> Void

    /// A log that writes nothing (route tables built without a configuration's log).
    static let silent = RequestLog(level: .error, sink: { _ in })

    /// An Apple endpoint at `path`: refusals (`OAuthError`, `AuthorizeError`) are logged with
    /// their reason, then answered as they always are.
    func apple(_ path: String, _ handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) -> HTTPHandler {
        guard level >= .info else { return .deferred(handler) }
        let debug = level >= .debug
        return .deferred { [sink] request in
            do {
                let response = try handler(request)
                if debug { sink(Self.answered(request, path, response.status)) }
                return response
            } catch let refusal as OAuthError {
                sink(Self.refused(request, path, code: refusal.code, reason: refusal.reason ?? refusal.description))
                throw refusal
            } catch let refusal as AuthorizeError {
                sink(Self.refused(request, path, code: refusal.answeredCode, reason: refusal.reason ?? refusal.message))
                throw refusal
            } catch {
                if debug { sink(Self.answered(request, path, Self.status(error))) }
                throw error
            }
        }
    }

    /// Any other route at `path` (nil: the request's own, for the not-found handler): its
    /// answers are logged at `debug`.
    func other(_ path: String?, _ handler: HTTPHandler) -> HTTPHandler {
        guard level >= .debug else { return handler }
        switch handler {
        case .immediate(let body):
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
            return .deferred { [sink] request in
                do {
                    let response = try await body(request)
                    sink(Self.answered(request, path, response.status))
                    return response
                } catch {
                    sink(Self.answered(request, path, Self.status(error)))
                    throw error
                }
            }
        }
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
