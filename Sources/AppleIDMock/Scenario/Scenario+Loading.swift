import FoundationEssentials
import JOSE
import Synchronization

extension Scenario {
    /// Largest scenario file accepted, as the file's own bytes count: room for 100,000 users
    /// pretty-printed (about 15 MB), which load tests of a backend sign up.
    static let maxFileBytes = 32 * 1024 * 1024
    /// Most clients across all teams (the domain indexes them).
    package static let maxClients = 65_536
    /// Most (user, team) pairs: each has a `sub` and a relay address the domain indexes,
    /// so users times teams is bounded, in the scenario and at runtime.
    static let maxUserTeamPairs = 2_000_000

    /// Most users the mock holds, the scenario's and runtime ones together (docs/limits.md).
    static let maxUserCount = 100_000

    /// Most users a scenario of `teams` teams holds, its own and runtime ones together:
    /// `maxUserCount`, or fewer when users times teams would pass `maxUserTeamPairs`.
    static func maxUsers(teams: Int) -> Int { min(maxUserCount, maxUserTeamPairs / max(1, teams)) }

    /// Reads and validates the scenario file at `path`. Beyond `load(json:)`, a file that names
    /// `signing_keys.directory` must name a directory that exists, except the built-in default
    /// `Keys/signing`, whose keys are built in (`BuiltInKeys`): what `scenario print` writes loads
    /// from any working directory.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: maxFileBytes)
        } catch {
            throw ScenarioError(path: "$", message: error.message)
        }
        let scenario = try load(json: bytes)
        if let directory = scenario.signingKeys.directory, directory != SigningKeys.defaultDirectory {
            guard BoundedFile.isDirectory(directory) else {
                throw ScenarioError(path: "signing_keys.directory", message: "expected an existing directory of <kid>.pem files, found \"\(directory)\"")
            }
            // A directory without key files is a slip (its parent, say), never a wish for
            // random keys that change at every start.
            guard !KeyRing.keyFileNames(in: directory).isEmpty else {
                throw ScenarioError(path: "signing_keys.directory", message: KeyRingError.noKeyFiles(directory).description)
            }
        }
        return scenario
    }

    /// A scenario written as a scenario file is (docs/scenario.md), checked as one: every problem
    /// is reported with its JSON path. Keys left out take their defaults.
    public init(json: String) throws(ScenarioError) {
        self = try Self.load(json: Array(json.utf8))
    }

    /// Parses and validates scenario JSON. Unknown keys are errors; every problem is reported
    /// with its JSON path.
    package static func load(json bytes: [UInt8]) throws(ScenarioError) -> Scenario {
        guard bytes.count <= maxFileBytes else {
            throw ScenarioError(path: "$", message: "expected at most \(maxFileBytes) bytes, found \(bytes.count)")
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw ScenarioError(path: "$", message: "invalid JSON: \(error)")
        }
        let reader = ScenarioReader()
        let scenario = read(document, reader)
        if !reader.problems.isEmpty { throw ScenarioError(problems: reader.problems) }
        lastLoaded.withLock { $0 = scenario }
        return scenario
    }

    /// The scenario `load` read last, which the rules passed: a domain built from it does not
    /// check it again (100,000 users take a good part of a second). Comparing it costs nothing
    /// when it is the same value (arrays that share their storage compare at once).
    private static let lastLoaded = Mutex<Scenario?>(nil)

    /// Whether `scenario` is one `load` read and the rules passed.
    static func wasLoaded(_ scenario: Scenario) -> Bool {
        lastLoaded.withLock { $0 == scenario }
    }

    /// Checks a scenario built in Swift against the rules a file gets, reading its JSON value as
    /// `load(json:)` reads a file's (no bytes printed, so no size limit: what a file's size
    /// bounds is its own bytes, and this one has none).
    static func check(_ scenario: Scenario) throws(ScenarioError) {
        let reader = ScenarioReader()
        _ = read(scenario.json, reader)
        if !reader.problems.isEmpty { throw ScenarioError(problems: reader.problems) }
    }

    private static func read(_ document: JSONValue, _ reader: ScenarioReader) -> Scenario {
        let root = "$"
        guard let top = reader.object(document, at: root,
                                      known: ["teams", "users", "signing_keys", "lifetimes", "compatibility", "auto_approve", "clock", "events", "seed", "journal", "faults", "mail"]) else {
            return Scenario(teams: [], users: [])
        }
        let teamItems = reader.array(top, "teams", at: root, required: true)
        if top["teams"] != nil && teamItems.isEmpty, case .array = top["teams"] { reader.report("teams", "expected at least one team") }
        let teams = teamItems.compactMap { readTeam($0.0, at: $0.1, reader) }
        let userItems = reader.array(top, "users", at: root, required: true)
        if top["users"] != nil && userItems.isEmpty, case .array = top["users"] { reader.report("users", "expected at least one user") }
        // The knobs first: a user's relay domain defaults to `compatibility.relay_domain`.
        let compatibility = top["compatibility"].map { readCompatibility($0, at: "compatibility", reader) } ?? Compatibility()
        let users = userItems.compactMap { readUser($0.0, at: $0.1, relayDomain: compatibility.relayDomain, reader) }
        var scenario = Scenario(teams: teams, users: users)
        scenario.compatibility = compatibility
        if let value = top["signing_keys"] { scenario.signingKeys = readSigningKeys(value, at: "signing_keys", reader) }
        if let value = top["lifetimes"] { scenario.lifetimes = readLifetimes(value, at: "lifetimes", reader) }
        if let value = top["auto_approve"], value != .null { scenario.autoApprove = readAutoApprove(value, at: "auto_approve", reader) }
        if let value = top["clock"] { scenario.clock = readClock(value, at: "clock", reader) }
        // JSON integers are read as Int64: a file's seed is 0 to Int64.max (`--seed` takes any UInt64).
        if let value = top["seed"], value != .null { scenario.seed = UInt64(reader.int(top, "seed", at: root, default: 0, range: 0...Int.max)) }
        if let value = top["journal"], let object = reader.object(value, at: "journal", known: ["capacity"]) {
            scenario.journalCapacity = reader.int(object, "capacity", at: "journal", default: scenario.journalCapacity, range: 1...RequestJournal.maxCapacity)
        }
        if let value = top["mail"], let object = reader.object(value, at: "mail", known: ["capacity", "max_bytes", "max_message_bytes"]) {
            scenario.mail.capacity = reader.int(object, "capacity", at: "mail", default: scenario.mail.capacity, range: 1...100_000)
            scenario.mail.maxBytes = reader.int(object, "max_bytes", at: "mail", default: scenario.mail.maxBytes, range: 1024...(1 << 30))
            scenario.mail.maxMessageBytes = reader.int(object, "max_message_bytes", at: "mail", default: scenario.mail.maxMessageBytes,
                                                       range: 1024...(64 << 20))
        }
        let eventItems = reader.array(top, "events", at: root, required: false)
        if eventItems.count > 1000 { reader.report("events", "expected at most 1000 events") }
        scenario.events = eventItems.prefix(1000).compactMap { readTimelineEvent($0.0, at: $0.1, reader) }
        // An entry is a fault, or an incident ({"incident": name}) standing for the faults that reproduce it.
        let faultItems = reader.array(top, "faults", at: root, required: false)
        scenario.faults = faultItems.prefix(FaultSpec.maxCount).flatMap { (item, path) throws(Never) -> [FaultSpec] in
            do throws(FaultSpec.Problem) {
                return try FaultIncident.entries(json: item)
            } catch {
                reader.report(error.key.map { ScenarioReader.child(path, $0) } ?? path, error.message)
                return []
            }
        }
        if faultItems.count > FaultSpec.maxCount || scenario.faults.count > FaultSpec.maxCount {
            reader.report("faults", "expected at most \(FaultSpec.maxCount) faults (an incident counts its own)")
        }
        crossCheck(scenario, teamItems: teamItems, userItems: userItems, reader)
        return scenario
    }

    private static func readTeam(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> Team? {
        guard let object = reader.object(value, at: path, known: ["team_id", "type", "developer_keys", "clients", "notification_url", "email_sources"]) else {
            return nil
        }
        let teamID = reader.string(object, "team_id", at: path, check: ScenarioRules.appleID(kind: "Team ID"))
        let keys = reader.array(object, "developer_keys", at: path, required: true).compactMap { item, keyPath -> DeveloperKey? in
            guard let key = reader.object(item, at: keyPath, known: ["key_id", "public_key", "primary_app_id", "propagation_seconds"]) else { return nil }
            var developerKey = DeveloperKey(keyID: reader.string(key, "key_id", at: keyPath, check: ScenarioRules.appleID(kind: "Key ID")),
                                            publicKeyPEM: reader.string(key, "public_key", at: keyPath, check: ScenarioRules.p256PublicKey),
                                            primaryAppID: reader.optionalString(key, "primary_app_id", at: keyPath))
            developerKey.propagationSeconds = reader.int(key, "propagation_seconds", at: keyPath, default: 0, range: 0...DeveloperKey.maxPropagationSeconds)
            return developerKey
        }
        let clients = reader.array(object, "clients", at: path, required: true).compactMap { readClient($0.0, at: $0.1, reader) }
        let notificationURL = reader.optionalString(object, "notification_url", at: path, check: ScenarioRules.notificationURL)
        var sources = EmailSources()
        if let value = object["email_sources"], value != .null, let sourcesObject = reader.object(value, at: "\(path).email_sources", known: ["domains", "addresses"]) {
            let at = "\(path).email_sources"
            // A domain is a string, or {"domain": …, "spf": "pass" | "fail"} for one whose SPF
            // check (Apple's, in DNS) the scenario decides.
            var spfFailing: [String] = []
            let domains = reader.array(sourcesObject, "domains", at: at, required: false).map { item, itemPath -> String in
                guard case .object = item else { return reader.string(item, at: itemPath, check: ScenarioRules.mailDomain) }
                guard let entry = reader.object(item, at: itemPath, known: ["domain", "spf"]) else { return "" }
                let domain = reader.string(entry, "domain", at: itemPath, check: ScenarioRules.mailDomain)
                let spf = reader.string(entry, "spf", at: itemPath, default: "pass") { ["pass", "fail"].contains($0) ? nil : #"expected "pass" or "fail", found "\#($0.prefix(40))""# }
                if spf == "fail" { spfFailing.append(domain) }
                return domain
            }
            let addresses = reader.array(sourcesObject, "addresses", at: at, required: false).map { reader.string($0.0, at: $0.1, check: ScenarioRules.email) }
            if domains.count + addresses.count > EmailSources.maxCount {
                reader.report(at, "expected at most \(EmailSources.maxCount) domains and addresses together")
            }
            sources = EmailSources(domains: domains, addresses: addresses, spfFailing: spfFailing)
        }
        var team = Team(teamID: teamID, developerKeys: keys, clients: clients, notificationURL: notificationURL, emailSources: sources)
        team.kind = reader.choice(object, "type", at: path, default: Team.Kind.organization)
        return team
    }

    private static func readClient(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> Client? {
        guard let object = reader.object(value, at: path, known: ["client_id", "type", "redirect_uris", "primary_app_id", "notification_url",
                                                                            "propagation_seconds"]) else { return nil }
        let clientID = reader.string(object, "client_id", at: path, check: ScenarioRules.clientID)
        let kind = reader.choice(object, "type", at: path, default: Client.Kind.appID)
        if object["type"] == nil { reader.report(ScenarioReader.child(path, "type"), "missing required key") }
        let uris = reader.array(object, "redirect_uris", at: path, required: false).map { item, uriPath -> String in
            guard case .string(let uri) = item else {
                reader.report(uriPath, "expected a string, found \(ScenarioReader.kind(item))")
                return ""
            }
            if let message = ScenarioRules.absoluteURL(uri) { reader.report(uriPath, message) }
            return uri
        }
        let primary = reader.optionalString(object, "primary_app_id", at: path)
        let notificationURL = reader.optionalString(object, "notification_url", at: path, check: ScenarioRules.notificationURL)
        var client = Client(clientID: clientID, kind: kind, redirectURIs: uris, primaryAppID: primary, notificationURL: notificationURL)
        client.propagationSeconds = reader.int(object, "propagation_seconds", at: path, default: 0, range: 0...DeveloperKey.maxPropagationSeconds)
        return client
    }

    private static func readUser(_ value: JSONValue, at path: String, relayDomain: RelayDomain, _ reader: ScenarioReader) -> User? {
        guard let object = reader.object(value, at: path,
                                         known: ["id", "email", "given_name", "family_name", "hide_email", "real_user_status", "relay_domain", "managed",
                                                 "omit_is_private_email"]) else { return nil }
        let managed = reader.bool(object, "managed", at: path, default: false)
        if managed {
            for key in ["email", "hide_email"] where object[key] != nil && object[key] != .null && object[key] != .bool(false) {
                reader.report(ScenarioReader.child(path, key), "expected none on a managed account (managed: a Work & School Apple Account without an email)")
            }
        }
        var user = User(id: reader.string(object, "id", at: path, check: ScenarioRules.userID),
                    email: managed ? "" : reader.string(object, "email", at: path, check: ScenarioRules.email),
                    givenName: reader.string(object, "given_name", at: path, default: ""),
                    familyName: reader.string(object, "family_name", at: path, default: ""),
                    hideEmail: reader.bool(object, "hide_email", at: path, default: false),
                    realUserStatus: reader.int(object, "real_user_status", at: path, default: 2, range: 0...2),
                    relayDomain: reader.choice(object, "relay_domain", at: path, default: relayDomain))
        user.managed = managed
        user.omitsPrivateEmail = reader.bool(object, "omit_is_private_email", at: path, default: false)
        return user
    }

    private static func readSigningKeys(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> SigningKeys {
        let defaults = SigningKeys()
        guard let object = reader.object(value, at: path, known: ["count", "directory", "active_kid", "rotation", "max_published"]) else { return defaults }
        var rotation: SigningKeys.Rotation?
        if let value = object["rotation"], value != .null { rotation = readRotation(value, at: ScenarioReader.child(path, "rotation"), reader) }
        let count = reader.int(object, "count", at: path, default: defaults.count, range: 1...10)
        return SigningKeys(count: count,
                           directory: object["directory"] == nil ? defaults.directory : reader.optionalString(object, "directory", at: path),
                           activeKeyID: reader.optionalString(object, "active_kid", at: path), rotation: rotation,
                           maxPublished: reader.int(object, "max_published", at: path, default: max(count, defaults.maxPublished),
                                                    range: count...SigningKeys.maxPublishedLimit))
    }

    private static func readRotation(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> SigningKeys.Rotation? {
        guard let object = reader.object(value, at: path, known: ["every", "publish_ahead", "retire_after"]) else { return nil }
        let tenYears = 3660 * 86400
        let every = reader.int(object, "every", at: path, default: 0, range: 60...tenYears)
        if object["every"] == nil { reader.report(ScenarioReader.child(path, "every"), "missing required key") }
        let ahead = reader.int(object, "publish_ahead", at: path, default: 0, range: 0...tenYears)
        let after = reader.int(object, "retire_after", at: path, default: 0, range: 0...tenYears)
        guard every >= 60 else { return nil }
        if ahead > every { reader.report(ScenarioReader.child(path, "publish_ahead"), "expected at most every (\(every))") }
        let rotation = SigningKeys.Rotation(every: every, publishAhead: min(ahead, every), retireAfter: after)
        if rotation.publishedAtOnce > 10 {
            reader.report(path, "expected a pattern that publishes at most 10 keys at once ((publish_ahead + retire_after) / every + 2), found \(rotation.publishedAtOnce)")
        }
        return rotation
    }

    private static func readTimelineEvent(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> TimelineEvent? {
        guard let object = reader.object(value, at: path, known: ["at", "type", "user", "client_id"]) else { return nil }
        if object["at"] == nil { reader.report(ScenarioReader.child(path, "at"), "missing required key") }
        let at = reader.int(object, "at", at: path, default: 0, range: 0...(3660 * 86400))
        let type = reader.string(object, "type", at: path) { AccountEventType(name: $0) == nil ? "expected \(AccountEventType.names)" : nil }
        return TimelineEvent(at: at, type: type, user: reader.string(object, "user", at: path), clientID: reader.string(object, "client_id", at: path))
    }

    private static func readClock(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> ClockSettings {
        guard let object = reader.object(value, at: path, known: ["start", "frozen"]) else { return ClockSettings() }
        let start = reader.optionalString(object, "start", at: path) { text in
            RFC3339.parse(text).map { MockClock.representable.contains($0) ? nil : "expected a time from 1970 to 2105" }
                ?? "expected an RFC 3339 time such as 2030-01-01T00:00:00Z"
        }
        return ClockSettings(start: start.flatMap(RFC3339.parse), frozen: reader.bool(object, "frozen", at: path, default: false))
    }

    private static func readLifetimes(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> Lifetimes {
        var lifetimes = Lifetimes()
        guard let object = reader.object(value, at: path,
                                         known: ["authorization_code", "access_token", "id_token", "transfer_window"]) else { return lifetimes }
        let year = 366 * 86400
        lifetimes.authorizationCode = reader.int(object, "authorization_code", at: path, default: lifetimes.authorizationCode, range: 1...year)
        lifetimes.accessToken = reader.int(object, "access_token", at: path, default: lifetimes.accessToken, range: 1...year)
        lifetimes.idToken = reader.int(object, "id_token", at: path, default: lifetimes.idToken, range: 1...year)
        lifetimes.transferWindow = reader.int(object, "transfer_window", at: path, default: lifetimes.transferWindow, range: 1...year)
        return lifetimes
    }

    private static func readCompatibility(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> Compatibility {
        guard let object = reader.object(value, at: path, known: Compatibility.keys) else { return Compatibility() }
        return Compatibility.read(object, at: path, reader)
    }

    private static func readAutoApprove(_ value: JSONValue, at path: String, _ reader: ScenarioReader) -> AutoApprove? {
        guard let object = reader.object(value, at: path, known: ["user", "hide_email"]) else { return nil }
        let hide: Bool? = object["hide_email"] == nil || object["hide_email"] == .null ? nil : reader.bool(object, "hide_email", at: path, default: false)
        return AutoApprove(user: reader.string(object, "user", at: path), hideEmail: hide)
    }

    /// A team's keys: each `primary_app_id` names a primary App ID of the team, and no primary
    /// App ID has more than two keys (§3, §10 [D]); a key with no `primary_app_id` counts for
    /// every primary App ID.
    private static func checkDeveloperKeys(_ team: Team, at teamPath: String, _ reader: ScenarioReader) {
        let primaries = team.clients.filter { $0.kind == .appID && $0.primaryAppID == nil }.map(\.clientID)
        for (keyIndex, key) in team.developerKeys.enumerated() {
            if let primary = key.primaryAppID, !primaries.contains(primary) {
                reader.report("\(teamPath).developer_keys[\(keyIndex)].primary_app_id",
                              "expected the client_id of a primary App ID of this team (an app_id without primary_app_id)")
            }
        }
        for primary in primaries {
            let count = team.developerKeys.filter { $0.primaryAppID == nil || $0.primaryAppID == primary }.count
            guard count > DeveloperKey.maxPerPrimaryAppID else { continue }
            reader.report("\(teamPath).developer_keys", "expected at most \(DeveloperKey.maxPerPrimaryAppID) Sign in with Apple keys for the primary App ID "
                          + "\(primary), found \(count) (Apple's limit; a key without primary_app_id counts for every primary App ID)")
            return
        }
    }

    /// Rules that span several objects: unique ids, references, knobs. (`strict_redirect_uris`
    /// holds for return URLs per authorize request, as Apple's rule does, so a scenario loads
    /// either way; a notification URL is registered once, so with it an http one is refused here.)
    private static func crossCheck(_ scenario: Scenario, teamItems: [(JSONValue, String)], userItems: [(JSONValue, String)], _ reader: ScenarioReader) {
        var teamIDs = Set<String>()
        var clientIDs = Set<String>()
        var clientCount = 0
        for (teamIndex, team) in scenario.teams.enumerated() {
            let teamPath = "teams[\(teamIndex)]"
            if !team.teamID.isEmpty && !teamIDs.insert(team.teamID).inserted { reader.report("\(teamPath).team_id", "duplicate team id \"\(team.teamID)\"") }
            if team.developerKeys.isEmpty { reader.report("\(teamPath).developer_keys", "expected at least one key") }
            var keyIDs = Set<String>()
            for (keyIndex, key) in team.developerKeys.enumerated() where !keyIDs.insert(key.keyID).inserted {
                reader.report("\(teamPath).developer_keys[\(keyIndex)].key_id", "duplicate key id \"\(key.keyID)\"")
            }
            if team.clients.isEmpty { reader.report("\(teamPath).clients", "expected at least one client") }
            clientCount += team.clients.count
            if clientCount > maxClients && clientCount - team.clients.count <= maxClients {
                reader.report("\(teamPath).clients", "expected at most \(maxClients) clients across all teams")
            }
            let appIDs = Set(team.clients.filter { $0.kind == .appID }.map(\.clientID))
            checkDeveloperKeys(team, at: teamPath, reader)
            for (clientIndex, client) in team.clients.enumerated() {
                let clientPath = "\(teamPath).clients[\(clientIndex)]"
                if !client.clientID.isEmpty && !clientIDs.insert(client.clientID).inserted {
                    reader.report("\(clientPath).client_id", "duplicate client id \"\(client.clientID)\" (client ids are unique across teams)")
                }
                if client.kind == .appID && !client.redirectURIs.isEmpty {
                    reader.report("\(clientPath).redirect_uris", "expected no redirect URIs on an app_id (return URLs belong to Services IDs)")
                }
                if client.redirectURIs.count > team.kind.maxWebsiteURLs {
                    reader.report("\(clientPath).redirect_uris", "expected at most \(team.kind.maxWebsiteURLs) website URLs for a Services ID of an \(team.kind.rawValue)'s team "
                                  + "(Apple's limit: 10 for an individual, 100 for an organization; the team's type is \(team.kind.rawValue))")
                }
                if let primary = client.primaryAppID {
                    if primary == client.clientID || !appIDs.contains(primary) {
                        reader.report("\(clientPath).primary_app_id", "expected the client_id of another app_id in this team")
                    }
                } else if client.kind == .servicesID {
                    reader.report("\(clientPath).primary_app_id", "missing required key (a Services ID is grouped with a primary App ID)")
                }
            }
        }
        for (teamIndex, team) in scenario.teams.enumerated() {
            for (clientIndex, client) in team.clients.enumerated() where client.notificationURL != nil && (client.kind != .appID || client.primaryAppID != nil) {
                reader.report("teams[\(teamIndex)].clients[\(clientIndex)].notification_url",
                              "expected only on a primary App ID (an app_id without primary_app_id): the URL belongs to the app group")
            }
            guard scenario.compatibility.strictRedirectURIs else { continue }
            // Apple registers only HTTPS notification endpoints (apple-behaviour.md §7 [D]).
            if let url = team.notificationURL, let message = ScenarioRules.strictNotificationURL(url) {
                reader.report("teams[\(teamIndex)].notification_url", message)
            }
            for (clientIndex, client) in team.clients.enumerated() {
                if let url = client.notificationURL, let message = ScenarioRules.strictNotificationURL(url) {
                    reader.report("teams[\(teamIndex)].clients[\(clientIndex)].notification_url", message)
                }
            }
        }
        if scenario.users.count > maxUsers(teams: scenario.teams.count) {
            let most = maxUsers(teams: scenario.teams.count)
            reader.report("users", most == maxUserCount
                          ? "expected at most \(maxUserCount) users, found \(scenario.users.count) (the most the mock holds, with those added at run time)"
                          : "expected at most \(most) users with \(scenario.teams.count) teams "
                            + "(each user has a sub and a relay address in every team; at most \(maxUserTeamPairs) pairs)")
        }
        var userIDs = Set<String>()
        for (index, user) in scenario.users.enumerated() where !user.id.isEmpty && !userIDs.insert(user.id).inserted {
            reader.report("users[\(index)].id", "duplicate user id \"\(user.id)\"")
        }
        if let auto = scenario.autoApprove, !auto.user.isEmpty, !userIDs.contains(auto.user) {
            reader.report("auto_approve.user", "expected the id of a user in users, found \"\(auto.user)\"")
        }
        for (index, event) in scenario.events.enumerated() {
            if !event.user.isEmpty && !userIDs.contains(event.user) && !ScenarioRules.isSubject(event.user) {
                reader.report("events[\(index)].user", "expected the id of a user in users, or a sub")
            }
            if !event.clientID.isEmpty && !clientIDs.contains(event.clientID) {
                reader.report("events[\(index)].client_id", "expected the client_id of a client in teams")
            }
        }
        if let active = scenario.signingKeys.activeKeyID, !ScenarioRules.isKeyID(active) {
            reader.report("signing_keys.active_kid", ScenarioRules.keyIDExpectation)
        }
    }
}
