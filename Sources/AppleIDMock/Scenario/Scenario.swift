/// Everything the mock pretends Apple knows: teams and their clients and keys, users, signing
/// keys, lifetimes, and a knob for each behaviour of Apple's that is uncertain
/// (apple-behaviour.md, "Conflicts and open questions"). Loaded from JSON with snake_case keys.
public struct Scenario: Sendable, Equatable {
    /// Developer teams, each with its own keys, clients and pairwise user identifiers.
    package var teams: [Team]
    /// People who can sign in.
    package var users: [User]
    /// Where the RSA keys that sign id_tokens come from.
    package var signingKeys: SigningKeys
    /// How long codes and tokens live.
    var lifetimes: Lifetimes
    /// Switches for Apple behaviours that changed over time or are unclear.
    package var compatibility: Compatibility
    /// When set, `/auth/authorize` approves at once as this user (no consent page).
    package var autoApprove: AutoApprove?
    /// Where the mock clock starts, and whether it stands still.
    package var clock: ClockSettings = ClockSettings()
    /// Account events that happen on their own as the mock clock passes them.
    package var events: [TimelineEvent] = []
    /// One seeded source for every draw, as `serve --seed` (which wins over it); nil draws from
    /// the system. A file holds a JSON integer, so at most `Int64.max`.
    package var seed: UInt64?
    /// How many requests the request journal keeps (`journal.capacity`, 1 to 100,000): the newest.
    var journalCapacity: Int = 10_000
    /// Faults installed at start and after every reset (`faults`, at most `FaultSpec.maxCount`).
    package var faults: [FaultSpec] = []
    /// The mailbox of the SMTP port.
    package var mail = MailSettings()

    /// An account event at a fixed point of the mock clock.
    package struct TimelineEvent: Sendable, Equatable {
        /// Seconds after the clock's start (or a reset).
        package var at: Int
        /// `consent-revoked`, `account-delete`/`account-deleted`, `email-disabled`, `email-enabled`.
        package var type: String
        /// User id or `sub`.
        package var user: String
        /// A client of the app group the event concerns.
        package var clientID: String

        /// An event from its parts.
        init(at: Int, type: String, user: String, clientID: String) {
            self.at = at
            self.type = type
            self.user = user
            self.clientID = clientID
        }
    }

    /// The server-to-server notification URL of an app group: its primary App ID's, else the team's (§7).
    func notificationURL(group groupID: String, team: Team) -> String? {
        team.clients.first { $0.clientID == groupID }?.notificationURL ?? team.notificationURL
    }

    /// A scenario from its parts.
    init(teams: [Team], users: [User], signingKeys: SigningKeys = SigningKeys(), lifetimes: Lifetimes = Lifetimes(),
                compatibility: Compatibility = Compatibility(), autoApprove: AutoApprove? = nil) {
        self.teams = teams
        self.users = users
        self.signingKeys = signingKeys
        self.lifetimes = lifetimes
        self.compatibility = compatibility
        self.autoApprove = autoApprove
    }

    /// The mock clock at start (and after a reset): real time, or a fixed instant, running or frozen.
    package struct ClockSettings: Sendable, Equatable {
        /// Seconds since 1970 the clock starts at; nil follows real time.
        package var start: Int64?
        /// Whether the clock stands still until moved.
        var frozen: Bool

        /// Real time, running; or the given start.
        package init(start: Int64? = nil, frozen: Bool = false) {
            self.start = start
            self.frozen = frozen
        }
    }

    /// A developer team (apple-behaviour.md §3, §6).
    package struct Team: Sendable, Equatable {
        /// Whose developer account the team is: it decides how many website URLs a Services ID
        /// takes (§10 [D]: 10 for an individual, 100 for an organization).
        package enum Kind: String, Sendable, Equatable, CaseIterable {
            /// An organization's account (the default).
            case organization
            /// One person's account.
            case individual

            /// Most website URLs (return URLs) one Services ID registers.
            var maxWebsiteURLs: Int { self == .individual ? 10 : 100 }
        }

        /// 10-character Team ID, the client_secret `iss`.
        package var teamID: String
        /// Individual or organization (`type`; default organization).
        package var kind: Kind = .organization
        /// Sign in with Apple private keys registered for the team (the halves that verify).
        package var developerKeys: [DeveloperKey]
        /// App IDs and Services IDs.
        package var clients: [Client]
        /// Server-to-server notification endpoint, registered on the primary App ID (§7).
        package var notificationURL: String?
        /// The domains and addresses registered to send mail to the team's relay addresses (§6).
        package var emailSources: EmailSources

        /// A team from its parts.
        package init(teamID: String, developerKeys: [DeveloperKey], clients: [Client], notificationURL: String? = nil,
                    emailSources: EmailSources = EmailSources()) {
            self.teamID = teamID
            self.developerKeys = developerKeys
            self.clients = clients
            self.notificationURL = notificationURL
            self.emailSources = emailSources
        }
    }

    /// A team's registered email sources (`email_sources`): mail to its relay addresses is
    /// forwarded only when the envelope sender's domain is exactly one of `domains` or the
    /// sender is one of `addresses` (apple-behaviour.md §6), and the sender's domain passes SPF.
    /// Apple checks SPF in DNS, which a mock cannot see: a domain in `spfFailing` is taken to
    /// fail it. Stored lower-case.
    package struct EmailSources: Sendable, Equatable {
        /// Most entries (domains and addresses together) a team registers.
        static let maxCount = 100
        /// Sending domains, e.g. `mail.example.com` (a subdomain is its own entry).
        private(set) var domains: [String]
        /// Single sending addresses, e.g. `noreply@example.org`.
        private(set) var addresses: [String]
        /// Registered domains whose SPF check fails (`{"domain": …, "spf": "fail"}`).
        private(set) var spfFailing: [String]

        /// What the relay makes of a sender.
        package enum Check: Sendable, Equatable {
            /// Registered, and its domain passes SPF.
            case allowed
            /// Neither its domain nor the address is registered.
            case unregistered
            /// Registered, but its domain fails SPF.
            case spfFail
        }

        /// Sources from their parts (lower-cased here); `spfFailing` names domains of `domains`
        /// (or any domain) whose SPF check fails.
        package init(domains: [String] = [], addresses: [String] = [], spfFailing: [String] = []) {
            self.domains = domains.map { $0.lowercased() }
            self.addresses = addresses.map { $0.lowercased() }
            self.spfFailing = spfFailing.map { $0.lowercased() }
        }

        /// Whether mail from `sender` (an envelope address, any case) may reach the team's users.
        func allow(_ sender: String) -> Bool { check(sender) == .allowed }

        /// The relay's verdict on the envelope `sender` (any case).
        package func check(_ sender: String) -> Check {
            let address = sender.lowercased()
            guard let at = address.lastIndex(of: "@") else { return .unregistered }
            let domain = String(address[address.index(after: at)...])
            guard addresses.contains(address) || domains.contains(domain) else { return .unregistered }
            return spfFailing.contains(domain) ? .spfFail : .allowed
        }
    }

    /// The mailbox that keeps what the SMTP port received (`mail`).
    package struct MailSettings: Sendable, Equatable {
        /// Most messages kept; the oldest go first.
        package var capacity: Int = 1000
        /// Most bytes of messages kept, their raw text counted; the oldest go first.
        var maxBytes: Int = 32 * 1024 * 1024
        /// Largest message accepted (the SMTP `SIZE`); a larger one is refused with 552.
        package var maxMessageBytes: Int = 10 * 1024 * 1024

        /// The defaults above.
        init() {}
    }

    /// A Sign in with Apple key: its 10-character Key ID and the verifying half of its P-256 key (PEM).
    package struct DeveloperKey: Sendable, Equatable {
        /// The `kid` a client_secret names.
        package var keyID: String
        /// SubjectPublicKeyInfo PEM of the P-256 key.
        package var publicKeyPEM: String
        /// The primary App ID the key is configured with (§3 [D]); it signs client secrets for
        /// that app group only. Nil: for every app group of the team (the mock's shorthand).
        package var primaryAppID: String?
        /// Seconds of mock time after the clock's start (or a reset) during which the key is
        /// still propagating at Apple: a secret it signs answers `invalid_client` (§3 [O], hours up
        /// to about two days after creation). 0: propagated.
        package var propagationSeconds = 0

        /// The longest propagation a scenario may give a key or client: a week (Apple's reported
        /// delays reach about two days).
        static let maxPropagationSeconds = 7 * 86400

        /// Most Sign in with Apple keys one primary App ID has (§3, §10 [D]).
        static let maxPerPrimaryAppID = 2

        /// A key from its parts.
        package init(keyID: String, publicKeyPEM: String, primaryAppID: String? = nil) {
            self.keyID = keyID
            self.publicKeyPEM = publicKeyPEM
            self.primaryAppID = primaryAppID
        }
    }

    /// An App ID (bundle id, native sign-in) or a Services ID (web sign-in).
    package struct Client: Sendable, Equatable {
        /// Which kind of identifier this is.
        package enum Kind: String, Sendable, Equatable, CaseIterable {
            /// A bundle id used by native apps.
            case appID = "app_id"
            /// A Services ID used on the web.
            case servicesID = "services_id"
        }

        /// The `client_id`, case-sensitive.
        package var clientID: String
        /// App ID or Services ID.
        package var kind: Kind
        /// Registered return URLs (Services IDs only), matched exactly.
        package var redirectURIs: [String]
        /// For a Services ID, the App ID it is grouped under (consent is shared with it).
        var primaryAppID: String?
        /// On a primary App ID: where its app group's server-to-server notifications go (§7).
        var notificationURL: String?
        /// Seconds of mock time after the clock's start (or a reset) during which the client is
        /// still propagating at Apple: the token, revoke and migration endpoints answer
        /// `invalid_client` for it, and the authorize page shows `invalid_client` (§3 [O]). 0: propagated.
        package var propagationSeconds = 0

        /// A client from its parts.
        package init(clientID: String, kind: Kind, redirectURIs: [String] = [], primaryAppID: String? = nil, notificationURL: String? = nil) {
            self.clientID = clientID
            self.kind = kind
            self.redirectURIs = redirectURIs
            self.primaryAppID = primaryAppID
            self.notificationURL = notificationURL
        }
    }

    /// A person with an Apple Account.
    package struct User: Sendable, Equatable {
        /// The name scenarios and the control API use for this user (not Apple's `sub`).
        package var id: String
        /// The real email address.
        package var email: String
        /// First name as it appears on the consent page.
        var givenName: String
        /// Last name.
        var familyName: String
        /// Whether the user picks Hide My Email by default.
        package var hideEmail: Bool
        /// 0 Unsupported, 1 Unknown, 2 LikelyReal (apple-behaviour.md §4).
        var realUserStatus: Int
        /// The domain of the user's relay addresses (`relay_domain`; the scenario's
        /// `compatibility.relay_domain` when the user names none).
        package var relayDomain: RelayDomain
        /// A Work & School (managed) Apple Account with no email (§4 [D]): the `email` scope
        /// gives none, in the id_token or the `user` JSON, and there is nothing to hide. `email`
        /// is empty.
        package var managed = false
        /// `omit_is_private_email`: the id_token leaves `is_private_email` out even when `email`
        /// is this user's relay address, as Apple did for some relay users in 2025 (§4 [O]).
        package var omitsPrivateEmail = false

        /// A user from its parts.
        init(id: String, email: String, givenName: String, familyName: String, hideEmail: Bool = false, realUserStatus: Int = 2,
                    relayDomain: RelayDomain = .issued) {
            self.id = id
            self.email = email
            self.givenName = givenName
            self.familyName = familyName
            self.hideEmail = hideEmail
            self.realUserStatus = realUserStatus
            self.relayDomain = relayDomain
        }
    }

    /// The JWKS: how many RSA-2048 keys, loaded from `directory` (`<kid>.pem`, sorted by file
    /// name); missing ones are generated at start and kept in memory.
    package struct SigningKeys: Sendable, Equatable {
        /// Keys published at `/auth/keys` (Apple publishes 3 to 5; §1.5).
        package var count: Int = 3
        /// Directory of PKCS#8 PEM files named `<kid>.pem`; relative paths from the working
        /// directory. The default, `Keys/signing`, is built in too: without such a directory
        /// there, the binary's copies of the committed keys are served (`BuiltInKeys`).
        package var directory: String? = SigningKeys.defaultDirectory
        /// Which key signs; nil means the first.
        package var activeKeyID: String?
        /// Apple's rotation pattern on the mock clock, if any.
        package var rotation: Rotation?
        /// Most keys published at once through the control API (`POST /__mock/keys` beyond it is
        /// 409; `rotate` retires the oldest to stay within it): `/auth/keys` never grows without
        /// bound on a long-lived mock. Apple publishes 3 to 5 (§1.5).
        var maxPublished: Int = SigningKeys.defaultMaxPublished

        /// The default bound on published keys.
        static let defaultMaxPublished = 10
        /// The highest bound a scenario may set.
        static let maxPublishedLimit = 100

        /// Rotation as Apple does it (apple-behaviour.md §1.5 [O]): a new key is published
        /// `publishAhead` seconds before it starts signing, a new key signs every `every` seconds,
        /// and a key that stopped signing stays published `retireAfter` seconds more.
        package struct Rotation: Sendable, Equatable {
            /// Seconds between activations.
            package var every: Int
            /// Seconds a key is published before it signs (at most `every`).
            var publishAhead: Int
            /// Seconds a replaced key stays published.
            var retireAfter: Int

            /// A rotation pattern.
            package init(every: Int, publishAhead: Int, retireAfter: Int) {
                self.every = every
                self.publishAhead = publishAhead
                self.retireAfter = retireAfter
            }

            /// Most keys the pattern ever publishes at once (it is a scenario rule that this is at most 10).
            package var publishedAtOnce: Int { (publishAhead + retireAfter) / every + 2 }
        }

        /// The directory the built-in scenario names, relative to the working directory.
        static let defaultDirectory = "Keys/signing"

        /// The defaults.
        init(count: Int = 3, directory: String? = SigningKeys.defaultDirectory, activeKeyID: String? = nil, rotation: Rotation? = nil,
                    maxPublished: Int = SigningKeys.defaultMaxPublished) {
            self.count = count
            self.directory = directory
            self.activeKeyID = activeKeyID
            self.rotation = rotation
            self.maxPublished = maxPublished
        }
    }

    /// Lifetimes in seconds (apple-behaviour.md §9).
    struct Lifetimes: Sendable, Equatable {
        /// Authorization code: 300 s [D] (some report 600 [U]).
        package var authorizationCode: Int = 300
        /// Access token `expires_in`: 3600 [D].
        var accessToken: Int = 3600
        /// id_token `exp - iat`: 86400 today, 600 in 2019–2020 [O].
        var idToken: Int = 86400
        /// How long `transfer_sub` and the migration endpoint work after a transfer: 60 days [D].
        var transferWindow: Int = 60 * 86400

        /// The defaults.
        init() {}
    }

    /// Approve `/auth/authorize` at once as `user`, for tests that only follow redirects.
    package struct AutoApprove: Sendable, Equatable {
        /// The scenario user id.
        package var user: String
        /// Hide My Email instead of sharing; nil takes the user's own preference.
        package var hideEmail: Bool?

        /// Auto-approval as `user`.
        package init(user: String, hideEmail: Bool? = nil) {
            self.user = user
            self.hideEmail = hideEmail
        }
    }
}
