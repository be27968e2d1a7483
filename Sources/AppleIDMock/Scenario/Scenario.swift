/// Everything the mock pretends Apple knows: teams and their clients and keys, users, signing
/// keys, lifetimes, and a knob for each behaviour of Apple's that is uncertain
/// (apple-reference.md, "Conflicts and open questions"). Loaded from JSON with snake_case keys.
public struct Scenario: Sendable, Equatable {
    /// Developer teams, each with its own keys, clients and pairwise user identifiers.
    public var teams: [Team]
    /// People who can sign in.
    public var users: [User]
    /// Where the RSA keys that sign id_tokens come from.
    public var signingKeys: SigningKeys
    /// How long codes and tokens live.
    public var lifetimes: Lifetimes
    /// Switches for Apple behaviours that changed over time or are unclear.
    public var compatibility: Compatibility
    /// When set, `/auth/authorize` approves at once as this user (no consent page).
    public var autoApprove: AutoApprove?
    /// Where the mock clock starts, and whether it stands still.
    public var clock: ClockSettings = ClockSettings()
    /// Account events that happen on their own as the mock clock passes them.
    public var events: [TimelineEvent] = []
    /// One seeded source for every draw, as `serve --seed` (which wins over it); nil draws from
    /// the system. A file holds a JSON integer, so at most `Int64.max`.
    public var seed: UInt64?
    /// How many requests the request journal keeps (`journal.capacity`, 1 to 100,000): the newest.
    public var journalCapacity: Int = 10_000
    /// Faults installed at start and after every reset (`faults`, at most `FaultSpec.maxCount`).
    public var faults: [FaultSpec] = []
    /// The mailbox of the SMTP port.
    public var mail = MailSettings()

    /// An account event at a fixed point of the mock clock.
    public struct TimelineEvent: Sendable, Equatable {
        /// Seconds after the clock's start (or a reset).
        public var at: Int
        /// `consent-revoked`, `account-delete`/`account-deleted`, `email-disabled`, `email-enabled`.
        public var type: String
        /// User id or `sub`.
        public var user: String
        /// A client of the app group the event concerns.
        public var clientID: String

        /// An event from its parts.
        public init(at: Int, type: String, user: String, clientID: String) {
            self.at = at
            self.type = type
            self.user = user
            self.clientID = clientID
        }
    }

    /// The server-to-server notification URL of an app group: its primary App ID's, else the team's (§7).
    public func notificationURL(group groupID: String, team: Team) -> String? {
        team.clients.first { $0.clientID == groupID }?.notificationURL ?? team.notificationURL
    }

    /// A scenario from its parts.
    public init(teams: [Team], users: [User], signingKeys: SigningKeys = SigningKeys(), lifetimes: Lifetimes = Lifetimes(),
                compatibility: Compatibility = Compatibility(), autoApprove: AutoApprove? = nil) {
        self.teams = teams
        self.users = users
        self.signingKeys = signingKeys
        self.lifetimes = lifetimes
        self.compatibility = compatibility
        self.autoApprove = autoApprove
    }

    /// The mock clock at start (and after a reset): real time, or a fixed instant, running or frozen.
    public struct ClockSettings: Sendable, Equatable {
        /// Seconds since 1970 the clock starts at; nil follows real time.
        public var start: Int64?
        /// Whether the clock stands still until moved.
        public var frozen: Bool

        /// Real time, running; or the given start.
        public init(start: Int64? = nil, frozen: Bool = false) {
            self.start = start
            self.frozen = frozen
        }
    }

    /// A developer team (apple-reference.md §3, §6).
    public struct Team: Sendable, Equatable {
        /// 10-character Team ID, the client_secret `iss`.
        public var teamID: String
        /// Sign in with Apple private keys registered for the team (public halves).
        public var developerKeys: [DeveloperKey]
        /// App IDs and Services IDs.
        public var clients: [Client]
        /// Server-to-server notification endpoint, registered on the primary App ID (§7).
        public var notificationURL: String?
        /// The domains and addresses registered to send mail to the team's relay addresses (§6).
        public var emailSources: EmailSources

        /// A team from its parts.
        public init(teamID: String, developerKeys: [DeveloperKey], clients: [Client], notificationURL: String? = nil,
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
    /// sender is one of `addresses` (apple-reference.md §6), and the sender's domain passes SPF.
    /// Apple checks SPF in DNS, which a mock cannot see: a domain in `spfFailing` is taken to
    /// fail it. Stored lower-case.
    public struct EmailSources: Sendable, Equatable {
        /// Most entries (domains and addresses together) a team registers.
        public static let maxCount = 100
        /// Sending domains, e.g. `mail.example.com` (a subdomain is its own entry).
        public private(set) var domains: [String]
        /// Single sending addresses, e.g. `noreply@example.org`.
        public private(set) var addresses: [String]
        /// Registered domains whose SPF check fails (`{"domain": …, "spf": "fail"}`).
        public private(set) var spfFailing: [String]

        /// What the relay makes of a sender.
        public enum Check: Sendable, Equatable {
            /// Registered, and its domain passes SPF.
            case allowed
            /// Neither its domain nor the address is registered.
            case unregistered
            /// Registered, but its domain fails SPF.
            case spfFail
        }

        /// Sources from their parts (lower-cased here); `spfFailing` names domains of `domains`
        /// (or any domain) whose SPF check fails.
        public init(domains: [String] = [], addresses: [String] = [], spfFailing: [String] = []) {
            self.domains = domains.map { $0.lowercased() }
            self.addresses = addresses.map { $0.lowercased() }
            self.spfFailing = spfFailing.map { $0.lowercased() }
        }

        /// Whether mail from `sender` (an envelope address, any case) may reach the team's users.
        public func allow(_ sender: String) -> Bool { check(sender) == .allowed }

        /// The relay's verdict on the envelope `sender` (any case).
        public func check(_ sender: String) -> Check {
            let address = sender.lowercased()
            guard let at = address.lastIndex(of: "@") else { return .unregistered }
            let domain = String(address[address.index(after: at)...])
            guard addresses.contains(address) || domains.contains(domain) else { return .unregistered }
            return spfFailing.contains(domain) ? .spfFail : .allowed
        }
    }

    /// The mailbox that keeps what the SMTP port received (`mail`).
    public struct MailSettings: Sendable, Equatable {
        /// Most messages kept; the oldest go first.
        public var capacity: Int = 1000
        /// Most bytes of messages kept, their raw text counted; the oldest go first.
        public var maxBytes: Int = 32 * 1024 * 1024
        /// Largest message accepted (the SMTP `SIZE`); a larger one is refused with 552.
        public var maxMessageBytes: Int = 10 * 1024 * 1024

        /// The defaults above.
        public init() {}
    }

    /// A Sign in with Apple key: its 10-character Key ID and P-256 public key (PEM).
    public struct DeveloperKey: Sendable, Equatable {
        /// The `kid` a client_secret names.
        public var keyID: String
        /// SubjectPublicKeyInfo PEM of the P-256 key.
        public var publicKeyPEM: String

        /// A key from its parts.
        public init(keyID: String, publicKeyPEM: String) {
            self.keyID = keyID
            self.publicKeyPEM = publicKeyPEM
        }
    }

    /// An App ID (bundle id, native sign-in) or a Services ID (web sign-in).
    public struct Client: Sendable, Equatable {
        /// Which kind of identifier this is.
        public enum Kind: String, Sendable, Equatable, CaseIterable {
            /// A bundle id used by native apps.
            case appID = "app_id"
            /// A Services ID used on the web.
            case servicesID = "services_id"
        }

        /// The `client_id`, case-sensitive.
        public var clientID: String
        /// App ID or Services ID.
        public var kind: Kind
        /// Registered return URLs (Services IDs only), matched exactly.
        public var redirectURIs: [String]
        /// For a Services ID, the App ID it is grouped under (consent is shared with it).
        public var primaryAppID: String?
        /// On a primary App ID: where its app group's server-to-server notifications go (§7).
        public var notificationURL: String?

        /// A client from its parts.
        public init(clientID: String, kind: Kind, redirectURIs: [String] = [], primaryAppID: String? = nil, notificationURL: String? = nil) {
            self.clientID = clientID
            self.kind = kind
            self.redirectURIs = redirectURIs
            self.primaryAppID = primaryAppID
            self.notificationURL = notificationURL
        }
    }

    /// A person with an Apple Account.
    public struct User: Sendable, Equatable {
        /// The name scenarios and the control API use for this user (not Apple's `sub`).
        public var id: String
        /// The real email address.
        public var email: String
        /// First name as it appears on the consent page.
        public var givenName: String
        /// Last name.
        public var familyName: String
        /// Whether the user picks Hide My Email by default.
        public var hideEmail: Bool
        /// 0 Unsupported, 1 Unknown, 2 LikelyReal (apple-reference.md §4).
        public var realUserStatus: Int
        /// The domain of the user's relay addresses (`relay_domain`; the scenario's
        /// `compatibility.relay_domain` when the user names none).
        public var relayDomain: RelayDomain

        /// A user from its parts.
        public init(id: String, email: String, givenName: String, familyName: String, hideEmail: Bool = false, realUserStatus: Int = 2,
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
    public struct SigningKeys: Sendable, Equatable {
        /// Keys published at `/auth/keys` (Apple publishes 3 to 5; §1.5).
        public var count: Int = 3
        /// Directory of PKCS#8 PEM files named `<kid>.pem`; relative paths from the working
        /// directory. The default, `Keys/signing`, is built in too: without such a directory
        /// there, the binary's copies of the committed keys are served (`BuiltInKeys`).
        public var directory: String? = SigningKeys.defaultDirectory
        /// Which key signs; nil means the first.
        public var activeKeyID: String?
        /// Apple's rotation pattern on the mock clock, if any.
        public var rotation: Rotation?
        /// Most keys published at once through the control API (`POST /__mock/keys` beyond it is
        /// 409; `rotate` retires the oldest to stay within it): `/auth/keys` never grows without
        /// bound on a long-lived mock (probe finding N7). Apple publishes 3 to 5 (§1.5).
        public var maxPublished: Int = SigningKeys.defaultMaxPublished

        /// The default bound on published keys.
        public static let defaultMaxPublished = 10
        /// The highest bound a scenario may set.
        public static let maxPublishedLimit = 100

        /// Rotation as Apple does it (apple-reference.md §1.5 [O]): a new key is published
        /// `publishAhead` seconds before it starts signing, a new key signs every `every` seconds,
        /// and a key that stopped signing stays published `retireAfter` seconds more.
        public struct Rotation: Sendable, Equatable {
            /// Seconds between activations.
            public var every: Int
            /// Seconds a key is published before it signs (at most `every`).
            public var publishAhead: Int
            /// Seconds a replaced key stays published.
            public var retireAfter: Int

            /// A rotation pattern.
            public init(every: Int, publishAhead: Int, retireAfter: Int) {
                self.every = every
                self.publishAhead = publishAhead
                self.retireAfter = retireAfter
            }

            /// Most keys the pattern ever publishes at once (it is a scenario rule that this is at most 10).
            public var publishedAtOnce: Int { (publishAhead + retireAfter) / every + 2 }
        }

        /// The directory the built-in scenario names, relative to the working directory.
        public static let defaultDirectory = "Keys/signing"

        /// The defaults.
        public init(count: Int = 3, directory: String? = SigningKeys.defaultDirectory, activeKeyID: String? = nil, rotation: Rotation? = nil,
                    maxPublished: Int = SigningKeys.defaultMaxPublished) {
            self.count = count
            self.directory = directory
            self.activeKeyID = activeKeyID
            self.rotation = rotation
            self.maxPublished = maxPublished
        }
    }

    /// Lifetimes in seconds (apple-reference.md §9).
    public struct Lifetimes: Sendable, Equatable {
        /// Authorization code: 300 s [D] (some report 600 [U]).
        public var authorizationCode: Int = 300
        /// Access token `expires_in`: 3600 [D].
        public var accessToken: Int = 3600
        /// id_token `exp - iat`: 86400 today, 600 in 2019–2020 [O].
        public var idToken: Int = 86400
        /// How long `transfer_sub` and the migration endpoint work after a transfer: 60 days [D].
        public var transferWindow: Int = 60 * 86400

        /// The defaults.
        public init() {}
    }

    /// Approve `/auth/authorize` at once as `user`, for tests that only follow redirects.
    public struct AutoApprove: Sendable, Equatable {
        /// The scenario user id.
        public var user: String
        /// Hide My Email instead of sharing; nil takes the user's own preference.
        public var hideEmail: Bool?

        /// Auto-approval as `user`.
        public init(user: String, hideEmail: Bool? = nil) {
            self.user = user
            self.hideEmail = hideEmail
        }
    }
}
