/// A `POST /auth/token` request as its endpoint decoded it from the form (§1.3): every field
/// Apple reads, nil when absent.
package struct TokenRequest: Sendable, Equatable {
    package var clientID: String?
    var clientSecret: String?
    var grantType: String?
    package var code: String?
    package var redirectURI: String?
    var codeVerifier: String?
    package var refreshToken: String?
    package var scope: String?

    init(clientID: String?, clientSecret: String?, grantType: String?, code: String? = nil, redirectURI: String? = nil,
                 codeVerifier: String? = nil, refreshToken: String? = nil, scope: String? = nil) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.grantType = grantType
        self.code = code
        self.redirectURI = redirectURI
        self.codeVerifier = codeVerifier
        self.refreshToken = refreshToken
        self.scope = scope
    }
}

/// What `/auth/token` grants: the endpoint writes it as Apple's JSON (`token_type` is always
/// `Bearer`).
package struct TokenAnswer: Sendable, Equatable {
    /// Whether and how the answer carries `refresh_token`.
    package enum RefreshToken: Sendable, Equatable {
        /// No `refresh_token` key (a refresh, unless the scenario echoes it; client credentials).
        case omitted
        /// `"refresh_token": null`: a code exchange that issues none.
        case none
        /// The token.
        case issued(String)
    }

    var accessToken: String
    var expiresIn: Int
    package var refreshToken: RefreshToken
    /// The signed id_token, when the grant gives one.
    var idToken: String?
}

/// Why `/auth/token` gave no grant: Apple's refusal, or the mock failing to sign (its own fault,
/// a logged 500).
package enum TokenFailure: Error, Equatable {
    case refused(OAuthError)
    case signing(String)
}

/// A `POST /auth/revoke` request, decoded (§1.4).
package struct RevokeRequest: Sendable, Equatable {
    package var clientID: String?
    var clientSecret: String?
    package var token: String?

    init(clientID: String?, clientSecret: String?, token: String?) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.token = token
    }
}

/// A `POST /auth/usermigrationinfo` request, decoded (§8): the sending team's `sub` and
/// `target`, or the receiving team's `transfer_sub`; `bearer` from the `Authorization` header.
struct MigrationRequest: Sendable, Equatable {
    package var clientID: String?
    var clientSecret: String?
    package var bearer: String?
    var subject: String?
    package var target: String?
    package var transferSubject: String?

    init(clientID: String?, clientSecret: String?, bearer: String?, subject: String? = nil, target: String? = nil,
                 transferSubject: String? = nil) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.bearer = bearer
        self.subject = subject
        self.target = target
        self.transferSubject = transferSubject
    }
}

/// What `/auth/usermigrationinfo` answers (§8).
enum MigrationAnswer: Sendable, Equatable {
    /// To the sending team: the user's `transfer_sub`.
    case transferSubject(String)
    /// To the receiving team: its own `sub` for the user, and the team's own relay address when
    /// the user hid their email (`is_private_email: true`).
    case subject(String, relayEmail: String?)
}
