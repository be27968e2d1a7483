/// An `/auth/authorize` configuration error: never redirected, shown on Apple's error page or,
/// with `authorize_error_format: "json"`, answered as TN3107 documents (apple-behaviour.md §2.2).
struct AuthorizeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// How the error is answered: the scenario's `authorize_error_format` and status.
    enum Rendering: Sendable, Equatable {
        /// Apple's HTML page with this status.
        case page(status: Int)
        /// TN3107's `{"error": …}` JSON with this status.
        case json(status: Int)
        /// 503: the mock is full (not Apple's; a limit of the mock).
        case unavailable
    }

    /// Apple's page code (`invalid_request`, `invalid_scope`, …).
    package var code: String
    /// Apple's message where known.
    package var message: String
    /// The parameter at fault.
    package var field: String
    /// TN3107's code for the same fault: `invalid_client` (unknown client), `unauthorized_client`
    /// (redirect_uri wrong or missing), `invalid_scope`, else `invalid_request`.
    var jsonCode: String
    /// How to answer; set by the domain from the scenario.
    var rendering: Rendering = .page(status: 400)
    /// Why the mock refused, in the developer's terms: written to the log, never into Apple's
    /// page or JSON, and no part of equality.
    package var reason: String?

    /// An error with Apple's code, message and the field at fault; the JSON code is the page code.
    init(code: String, message: String, field: String, jsonCode: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.jsonCode = jsonCode ?? code
    }

    /// An error with Apple's code, message and field, and the developer-facing `reason`.
    init(code: String, message: String, field: String, jsonCode: String? = nil, reason: String) {
        self.init(code: code, message: message, field: field, jsonCode: jsonCode)
        self.reason = reason
    }

    /// `Invalid client id or web redirect url.` — a missing client id, a bundle id, or an
    /// unregistered return URL (§2.2 [O]).
    static func clientOrRedirect(_ field: String, _ reason: String) -> AuthorizeError {
        AuthorizeError(code: "invalid_request", message: "Invalid client id or web redirect url.", field: field,
                       jsonCode: field == "client_id" ? "invalid_client" : "unauthorized_client", reason: reason)
    }

    /// A `client_id` that is no client of the scenario: Apple's page shows `invalid_client` (§2.2 [O],
    /// a screenshot of Apple's page for a bad client id); the message is the one Apple shows for
    /// client id faults.
    static func unknownClient(_ reason: String) -> AuthorizeError {
        AuthorizeError(code: "invalid_client", message: "Invalid client id or web redirect url.", field: "client_id", reason: reason)
    }

    /// Apple's general wording for missing or unsupported parameters (§2.2, 2019 [O]).
    static func unsupported(_ field: String, _ reason: String) -> AuthorizeError {
        AuthorizeError(code: "invalid_request", message: "Request missing required parameter or unsupported parameters or invalid redirect url",
                       field: field, jsonCode: field == "redirect_uri" ? "unauthorized_client" : "invalid_request", reason: reason)
    }

    /// The code the answer carries: the page's, or TN3107's in JSON.
    var answeredCode: String {
        if case .json = rendering { return jsonCode }
        return code
    }

    /// Equal when Apple's answer is (the reason does not count).
    static func == (lhs: AuthorizeError, rhs: AuthorizeError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.field == rhs.field && lhs.jsonCode == rhs.jsonCode
            && lhs.rendering == rhs.rendering
    }

    /// The same error answered as `compatibility` says.
    func rendered(_ compatibility: Compatibility) -> AuthorizeError {
        guard rendering != .unavailable else { return self }
        var copy = self
        copy.rendering = compatibility.authorizeErrorFormat == .json
            ? .json(status: compatibility.authorizeErrorStatus) : .page(status: compatibility.authorizeErrorStatus)
        return copy
    }

    /// `code: message`.
    package var description: String { "\(code): \(message)" }
}
