/// One knob for each behaviour of Apple's the reference marks uncertain or changed; every
/// default is what Apple does today (apple-behaviour.md, "Conflicts and open questions").
package struct Compatibility: Sendable, Equatable {
    /// How a boolean claim is encoded in an id_token.
    package enum BooleanEncoding: String, Sendable, Equatable, CaseIterable {
        /// JSON `true`/`false` (Apple since Feb 2024).
        case boolean
        /// Strings `"true"`/`"false"` (Apple 2019 – early 2024).
        case string
    }

    /// The unit of `event_time` in server-to-server notifications.
    enum TimeUnit: String, Sendable, Equatable, CaseIterable {
        /// Seconds since 1970, as in Apple's examples.
        case seconds
        /// Milliseconds since 1970, as in a real captured event.
        case milliseconds
    }

    /// How `/auth/authorize` reports a configuration error.
    package enum AuthorizeErrorFormat: String, Sendable, Equatable, CaseIterable {
        /// Apple's rendered HTML error page with code and message (observed).
        case page
        /// `{"error": …}` JSON (TN3107).
        case json
    }

    /// `email_verified` encoding (§4; open question 1). Today: boolean.
    var emailVerified: BooleanEncoding = .boolean
    /// `is_private_email` encoding in id_tokens (§4; open question 1). Today: boolean.
    package var isPrivateEmail: BooleanEncoding = .boolean
    /// `response_mode` when the request omits it (§1.2 [U]). Today's assumption: `query`.
    var defaultResponseMode: String = "query"
    /// Whether a refresh answer carries an `id_token` (§1.3; open question 3). Today: yes.
    package var refreshReturnsIDToken: Bool = true
    /// Whether a refresh answer carries a `refresh_token` (§1.3). Today: no.
    package var refreshReturnsRefreshToken: Bool = false
    /// Error for refreshing after the user revoked consent (§2.1; open question 7). Today: `invalid_request` (TN3107).
    package var revokedConsentRefreshError: String = "invalid_request"
    /// Refresh throttling (§9): Apple asks backends to validate a refresh token "up to once a
    /// day" and "may throttle" more, but no throttled answer is on record. Nil (today): no
    /// throttling. Set: after `perDay` refreshes of one refresh token within a mock day (UTC),
    /// the next answers `error` until the day ends.
    package var refreshThrottle: RefreshThrottle?
    /// Whether `code_challenge_method=plain` is accepted (§1.2 [U]).
    package var pkcePlainAllowed: Bool = true
    /// Seconds a client_secret `iat` may lie in the future (§3 [U]). Today: none.
    package var clientSecretIATLeeway: Int = 0
    /// The clock a client_secret's `iat` and `exp` are checked against: the mock clock, as
    /// Apple checks them against its own (§3), or real time, for a backend that mints secrets
    /// from the real clock while a suite moves the mock's far ahead.
    var clientSecretClock: ClientSecretClock = .mock
    /// Whether a client_secret may write `aud` as a one-element array `["https://appleid.apple.com"]`,
    /// as Go's golang-jwt `RegisteredClaims` does by default (§3: very likely accepted by Apple).
    /// Today: accepted; any other array is refused either way.
    package var clientSecretAudArray: AudienceArray = .accept
    /// Whether later id_tokens still carry `email` (§4; open question 10). Today: yes.
    var emailOnLaterLogins: Bool = true
    /// Whether `/auth/keys` lists its keys in a new order on each fetch (§1.5 [O]).
    package var shuffleKeys: Bool = true
    /// Status and format of authorize error answers (§2.2; open question 6).
    package var authorizeErrorFormat: AuthorizeErrorFormat = .page
    /// HTTP status of authorize error answers. Unconfirmed; 400 per TN3107.
    package var authorizeErrorStatus: Int = 400
    /// Enforce Apple's redirect_uri rules (https, a domain name, no IP, no localhost, no fragment).
    package var strictRedirectURIs: Bool = false
    /// Deletion event type (§7; open question 4): `account-deleted` as Apple's current page says, or `account-delete` as older docs and most libraries.
    var accountDeletionEventType: String = "account-deleted"
    /// `event_time` unit (§7; open question 5). Today: milliseconds, as captured.
    var eventTimeUnit: TimeUnit = .milliseconds
    /// Whether `/auth/revoke` also sends a `consent-revoked` notification (§1.4 [U]).
    var revokeNotifies: Bool = false

    /// Whether `/auth/revoke` without a `token` is `invalid_request` (strict, catches the
    /// library bug of sending `refresh_token=`, §11 pitfall 18) instead of Apple's 200 that
    /// revokes nothing.
    package var revokeRequiresToken: Bool = false
    /// Error for a token request with a JSON body (`application/json`, or a body that is a JSON
    /// object): `invalid_client` as observed at Apple (apple-behaviour.md §1.3 [O], §11 pitfall
    /// 10), or `invalid_request`, TN3107's error for a bad content type (§2.1 [D]). Other
    /// non-form bodies are always `invalid_request` (TN3107). Read from `token_json_body_error`,
    /// or its former name `token_content_type_error`.
    package var tokenJSONBodyError: String = "invalid_client"
    /// `Cache-Control` on `/auth/keys`, or nil for none. Apple's headers say not to cache (§1.5
    /// [O]); the exact value is unknown.
    package var jwksCacheControl: String? = "no-cache"

    /// How the notification JWT carries `events`: a JSON-encoded string as real payloads do
    /// (§7 [O]), or an object as Apple's examples show.
    var eventsClaimFormat: EventsClaimFormat = .string
    /// Seconds to wait before each retry of a notification the receiver refused, did not answer
    /// in time, or answered with a non-2xx status (Apple's schedule is undocumented, §7 [U]).
    package var notificationRetryDelays: [Int] = [1, 2, 4, 8, 16]

    /// The clock client secrets are checked against.
    enum ClientSecretClock: String, Sendable, Equatable, CaseIterable {
        /// The mock clock, which `POST /__mock/clock` moves (Apple's behaviour).
        case mock
        /// Real time, whatever the mock clock says.
        case real
    }

    /// Whether a client_secret's `aud` may be a one-element array of Apple's audience.
    package enum AudienceArray: String, Sendable, Equatable, CaseIterable {
        /// `["https://appleid.apple.com"]` is taken as the string is.
        case accept
        /// Only the string form, as Apple's text writes it.
        case refuse
    }

    /// The shape of the notification's `events` claim.
    enum EventsClaimFormat: String, Sendable, Equatable, CaseIterable {
        /// `"events": "{\"type\":…}"`.
        case string
        /// `"events": {"type": …}`.
        case object
    }

    /// The domain of relay addresses (§6): `privaterelay.appleid.com`, where nearly every
    /// existing address lives and Apple still issues them, or `private.icloud.com`, where Apple
    /// says new ones move later in 2026, or `icloud.com`, which newer docs also name. A user's
    /// own `relay_domain` overrides it, so one suite holds users of each (the built-in scenario
    /// holds the first two).
    var relayDomain: RelayDomain = .issued

    /// The text after `550` when the relay refuses a recipient (§6), one per reason.
    package var relayRefusal = RelayRefusalTexts()

    /// The relay's reply texts by reason: `{sender}` stands for the envelope sender,
    /// `{recipient}` for the relay address. Two are observed from Apple's relay; the others are
    /// not documented, and their defaults say so.
    package struct RelayRefusalTexts: Sendable, Equatable {
        /// No user has the address: observed as `550 5.1.1 <relay address>: user not found`.
        package var unknownRecipient = "5.1.1 <{recipient}>: user not found"
        /// The user deleted their account. Not documented: the unknown-address text, as the
        /// address no longer reaches anyone.
        var accountDeleted = "5.1.1 <{recipient}>: user not found"
        /// The user turned forwarding off for the team. Not documented: the unknown-address text.
        var forwardingDisabled = "5.1.1 <{recipient}>: user not found"
        /// The sender is not registered: observed as `550 5.1.1 <sender>: unauthorized sender`.
        package var unauthorizedSender = "5.1.1 <{sender}>: unauthorized sender"
        /// The sender's domain fails SPF. Not documented: RFC 7372's code for a failed SPF check.
        package var spfFail = "5.7.23 <{sender}>: SPF validation failed"

        /// Apple's texts as observed, and the documented stand-ins.
        init() {}

        /// The text for `refusal`.
        subscript(refusal: RelayRefusal) -> String {
            get {
                switch refusal {
                case .unknownRecipient: unknownRecipient
                case .accountDeleted: accountDeleted
                case .forwardingDisabled: forwardingDisabled
                case .unauthorizedSender: unauthorizedSender
                case .spfFail: spfFail
                }
            }
            set {
                switch refusal {
                case .unknownRecipient: unknownRecipient = newValue
                case .accountDeleted: accountDeleted = newValue
                case .forwardingDisabled: forwardingDisabled = newValue
                case .unauthorizedSender: unauthorizedSender = newValue
                case .spfFail: spfFail = newValue
                }
            }
        }
    }

    /// Today's Apple.
    init() {}
}

/// The knob `refresh_throttle` (§9): how many refreshes of one refresh token a mock day (UTC)
/// allows, and what the next one answers.
package struct RefreshThrottle: Sendable, Equatable {
    /// Refreshes of one token allowed within a mock day: 1 to 1,000,000.
    package var perDay: Int
    /// The `/auth/token` error code past them (HTTP 400, `{"error": …}`).
    package var error: String

    /// The errors it may answer: Apple's `/auth/token` codes a refresh can meet.
    static let errors = ["invalid_grant", "invalid_request", "invalid_client", "unauthorized_client"]
    /// The most `per_day` may be.
    static let maxPerDay = 1_000_000

    /// A throttle of `perDay` refreshes a token a mock day, answering `error` past them.
    package init(perDay: Int, error: String) {
        self.perDay = perDay
        self.error = error
    }
}

