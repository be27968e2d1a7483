import JOSE

/// An error from Apple's token, revoke and migration endpoints (apple-behaviour.md §2.1):
/// always HTTP 400, `{"error": code}` plus `error_description` only where Apple sends one.
/// The developer-facing `reason` rides along for the log and never reaches Apple's body.
package struct OAuthError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One of `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`,
    /// `unsupported_grant_type`, `invalid_scope`.
    package var code: String
    /// Apple's description, when Apple gives one.
    var errorDescription: String?
    /// Why the mock refused, in the developer's terms (`client_secret sub is … but client_id is
    /// …`): written to the log, never into Apple's body, and no part of equality. Built only on
    /// the refusal path; user-controlled values in it are clipped (`LogText.clip`).
    package var reason: String?

    /// An error with an optional description.
    init(_ code: String, _ description: String? = nil) {
        self.code = code
        self.errorDescription = description
    }

    /// The same error carrying `reason`.
    package func because(_ reason: String) -> OAuthError {
        var copy = self
        copy.reason = reason
        return copy
    }

    /// Equal when Apple's answer is: code and description (the reason does not count).
    package static func == (lhs: OAuthError, rhs: OAuthError) -> Bool {
        lhs.code == rhs.code && lhs.errorDescription == rhs.errorDescription
    }

    /// `invalid_request`.
    static let invalidRequest = OAuthError("invalid_request")
    /// `invalid_client` — Apple never describes it (§3).
    package static let invalidClient = OAuthError("invalid_client")
    /// `invalid_grant` with no description.
    package static let invalidGrant = OAuthError("invalid_grant")
    /// `unsupported_grant_type`.
    static let unsupportedGrantType = OAuthError("unsupported_grant_type")
    /// `invalid_scope`.
    static let invalidScope = OAuthError("invalid_scope")

    /// `The code has already been used.` (§2.1 [O]).
    static let codeAlreadyUsed = OAuthError("invalid_grant", "The code has already been used.")
    /// `The code has expired or has been revoked.` (§2.1 [O]).
    static let codeExpired = OAuthError("invalid_grant", "The code has expired or has been revoked.")

    /// `client_id mismatch. The code was not issued to <client_id>.` (§2.1 [O]).
    static func clientMismatch(_ clientID: String) -> OAuthError {
        OAuthError("invalid_grant", "client_id mismatch. The code was not issued to \(clientID).")
    }

    /// `redirect_uri mismatch. The code was not issued to <redirect_uri>.` (§2.1 [O]).
    static func redirectMismatch(_ redirectURI: String) -> OAuthError {
        OAuthError("invalid_grant", "redirect_uri mismatch. The code was not issued to \(redirectURI).")
    }

    /// The JSON body.
    package var json: JSONValue {
        var object = JSONObject()
        object["error"] = .string(code)
        if let errorDescription { object["error_description"] = .string(errorDescription) }
        return .object(object)
    }

    /// `code: description`.
    package var description: String { errorDescription.map { "\(code): \($0)" } ?? code }
}
