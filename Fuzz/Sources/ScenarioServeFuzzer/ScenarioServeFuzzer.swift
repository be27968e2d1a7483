import AppleIDMock
import Dispatch
import FoundationEssentials
import JOSE
import MiniHTTP

// Input: a scenario file, optionally followed by a NUL byte and control bytes (JSON text never
// holds a raw NUL, so the first one splits the input unambiguously). A scenario that
// `Scenario.load(json:)` accepts must be servable: the mock is built in memory over it
// (`AppleIDMockServer.inMemory`: keys from the repository's Keys/signing, a fixed real time,
// the request journal on, notifications to a receiver that is never reached) and one request
// of every kind is answered, with the scenario's own ids so requests reach deep code, chained
// as a client would (authorize → code → token → refresh → revoke; sign-in → code; client
// credentials → migration; account events; clock moves), plus garbage from the control bytes;
// then every read route (the event feed, the notification log, the journal filtered by the
// raw query word, its count, the dashboard filtered by it, keys, users, clock, faults, mail).
//
//   control[0]     flags: bits 0-1 response_mode (absent, query, fragment, form_post); bit 2
//                  response_type "code id_token"; bits 3-4 scope (none, "openid", "name email",
//                  "openid name email"); bit 5 PKCE S256; bit 6 hide_email; bit 7 cancel.
//   control[1]     which user signs in (index modulo the scenario's users).
//   control[2]     edits the scenario text before loading, as a byte mutator hardly would:
//                  0xFF grows the first team so that all teams hold `Scenario.maxClients` + 1
//                  clients (probe F3); 0xF0-0xFE do nothing; below 0xF0, bits 0-1
//                  cut the first team's clients and bits 2-3 the users to (all, 0, 1, 2) (probe
//                  F2), bit 4 empties every redirect_uris, bit 5 drops every primary_app_id.
//                  With no control bytes, one scenario text in four gets edits from its byte sum.
//   control[3...]  up to six NUL-separated words: (0) a raw query for GET /auth/authorize,
//                  (1) a raw form body for Apple's POST endpoints, (2) a raw JSON body for the
//                  control endpoints, (3) state, (4) nonce, (5) extra: given name, a redirect URI
//                  for Services IDs without one, the migration target when there is one team.
//
// Checked beyond "does not crash": every status is 200-599 and never 500 (an unexpected handler
// error); header names are tokens and values hold no CR, LF, NUL or other control byte; 204 and
// 304 carry no body; the static documents and an id_token for the first user answer 200; a
// redeemed code does not redeem twice; a refresh token its client revoked no longer refreshes.

/// The repository root, from this file's path (Fuzz/Sources/ScenarioServeFuzzer/…).
private let repositoryRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(4)
    return parts.joined(separator: "/")
}()

/// The checked-in RSA signing keys: loading them is fast, generating keys per input is not.
private let keysDirectory = repositoryRoot + "/Keys/signing"

/// The kids of `keysDirectory` in the order `KeyRing` loads them.
private let signingKeyIDs: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: keysDirectory)) ?? [])
    .filter { $0.hasSuffix(".pem") }.sorted().map { String($0.dropLast(4)) }

/// The default team's developer key (`Keys/AuthKey_MOCKKEY001.p8`): client secrets can be signed
/// for every team that registers its public half.
private let developerKey: P256PrivateKey? = {
    guard let data = FileManager.default.contents(atPath: repositoryRoot + "/Keys/AuthKey_MOCKKEY001.p8") else { return nil }
    return try? P256PrivateKey(pem: String(decoding: data, as: UTF8.self))
}()

/// The mock's real time, fixed so runs repeat (the mock clock starts here unless the scenario says).
private let realTime: Int64 = 1_800_000_000

/// Client secrets already signed, by team, kid, client and time (ES256 signing is not free).
nonisolated(unsafe) private var secretCache: [String: String] = [:]

/// What the control bytes say.
private struct Knobs {
    var flags: UInt8 = 0
    var userIndex = 0
    var inflate: UInt8 = 0
    var words: [String] = []

    init(_ control: ArraySlice<UInt8>) {
        let bytes = Array(control)
        if bytes.count > 0 { flags = bytes[0] }
        if bytes.count > 1 { userIndex = Int(bytes[1]) }
        if bytes.count > 2 { inflate = bytes[2] }
        if bytes.count > 3 {
            words = bytes[3...].split(separator: 0, maxSplits: 5, omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
        }
    }

    func word(_ index: Int) -> String { index < words.count ? words[index] : "" }
    var rawQuery: String { word(0) }
    var rawForm: [UInt8] { Array(word(1).utf8) }
    var rawJSON: [UInt8] { Array(word(2).utf8) }
    var state: String? { words.count > 3 ? word(3) : nil }
    var nonce: String? { words.count > 4 ? word(4) : nil }
    var extra: String? { words.count > 5 ? word(5) : nil }

    var responseMode: String? { [nil, "query", "fragment", "form_post"][Int(flags & 3)] }
    var responseType: String { flags & 4 != 0 ? "code id_token" : "code" }
    var scope: String? { [nil, "openid", "name email", "openid name email"][Int(flags >> 3 & 3)] }
    var usesPKCE: Bool { flags & 32 != 0 }
    var hideEmail: Bool { flags & 64 != 0 }
    var cancels: Bool { flags & 128 != 0 }
}

/// Stops the process with a message libFuzzer records as a crash.
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// `request` and `response` in a few lines, for a finding's message.
private func describe(_ request: HTTPRequest, _ response: HTTPResponse) -> String {
    let headers = request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    return "\(request.method) \(request.target)\n\(headers)\n\n\(String(decoding: request.body.prefix(4096), as: UTF8.self))\n"
        + "--> \(response.status.code) \(response.status.reason)\n\(String(decoding: response.body.prefix(4096), as: UTF8.self))"
}

/// A scenario file whose first team is grown until all teams hold `total` clients. The new
/// clients are written as text in place of a marker: building 65,536 `JSONValue`s costs seconds.
private func inflated(_ json: ArraySlice<UInt8>, total: Int) -> [UInt8]? {
    guard case .object(var top)? = try? JSONParser.parse(json), case .array(var teams)? = top["teams"],
          case .object(var team)? = teams.first, case .array(var clients)? = team["clients"] else { return nil }
    let existing = teams.reduce(0) { count, team in count + (team.objectValue?["clients"]?.arrayValue?.count ?? 0) }
    guard existing < total else { return nil }
    let marker = "~inflate-marker~"
    clients.append(.string(marker))
    team["clients"] = .array(clients)
    teams[0] = .object(team)
    top["teams"] = .array(teams)
    let text = JSONWriter.compact(.object(top))
    let quoted = Array("\"\(marker)\"".utf8)
    guard let at = text.indices.first(where: { text[$0...].starts(with: quoted) }) else { return nil }
    var grown: [UInt8] = []
    grown.reserveCapacity(text.count + (total - existing) * 36)
    grown.append(contentsOf: text[..<at])
    for index in 0..<(total - existing) {
        if index > 0 { grown.append(UInt8(ascii: ",")) }
        grown.append(contentsOf: "{\"client_id\":\"~\(String(index, radix: 16))\",\"type\":\"app_id\"}".utf8)
    }
    grown.append(contentsOf: text[(at + quoted.count)...])
    return grown
}

/// For a scenario with no control bytes, edits from the text's byte sum (one in four sums): a
/// mutation that keeps the JSON valid then also explores the edits, which mutating a tail byte
/// of a valid input alone reaches too rarely.
private func checksumEdits(_ json: [UInt8]) -> UInt8 {
    let sum = json.reduce(0) { $0 &+ Int($1) }
    return sum % 4 == 0 ? UInt8(sum / 4 & 0x3F) : 0
}

/// A scenario file with collections cut short as `edits` says (control[2] below 0xF0).
private func pruned(_ json: ArraySlice<UInt8>, _ edits: UInt8) -> [UInt8]? {
    guard case .object(var top)? = try? JSONParser.parse(json) else { return nil }
    let limits = [Int.max, 0, 1, 2]
    if case .array(var teams)? = top["teams"] {
        for index in teams.indices {
            guard case .object(var team) = teams[index], case .array(var clients)? = team["clients"] else { continue }
            if index == 0 { clients = Array(clients.prefix(limits[Int(edits & 3)])) }
            for client in clients.indices {
                guard case .object(var object) = clients[client] else { continue }
                if edits & 16 != 0, object["redirect_uris"] != nil { object["redirect_uris"] = .array([]) }
                if edits & 32 != 0 { object["primary_app_id"] = nil }
                clients[client] = .object(object)
            }
            team["clients"] = .array(clients)
            teams[index] = .object(team)
        }
        top["teams"] = .array(teams)
    }
    if case .array(let users)? = top["users"] { top["users"] = .array(Array(users.prefix(limits[Int(edits >> 2 & 3)]))) }
    return JSONWriter.compact(.object(top))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let knobs = Knobs(split < bytes.count ? bytes[(split + 1)...] : [])
    var json = Array(bytes[..<split])
    let edits = split < bytes.count ? knobs.inflate : checksumEdits(json)
    // Only 0xFF grows (to one client over the limit): a grown scenario costs seconds a run under
    // ASan, so the mutator should rarely pick it; the accepted side (65,536) is a unit test.
    if knobs.inflate == 0xFF, let grown = inflated(bytes[..<split], total: Scenario.maxClients + 1) {
        json = grown
    } else if edits & 0x3F != 0, let pruned = pruned(bytes[..<split], edits) {
        json = pruned
    }

    guard var scenario = try? Scenario.load(json: json) else { return 0 }
    // Keys come from Keys/signing and are never generated; an active kid that is not among
    // them would only make every input with one fail to start.
    scenario.signingKeys.count = min(scenario.signingKeys.count, 3)
    scenario.signingKeys.directory = keysDirectory
    if let active = scenario.signingKeys.activeKeyID, !signingKeyIDs.prefix(scenario.signingKeys.count).contains(active) {
        scenario.signingKeys.activeKeyID = nil
    }
    var configuration = AppleIDMockConfiguration()
    configuration.scenario = scenario
    configuration.keysDirectory = keysDirectory
    configuration.realTime = { Double(realTime) }
    configuration.log = { _ in }
    configuration.baseURL = "http://127.0.0.1:8080"
    configuration.notificationTransport = Unreachable()
    configuration.notificationShutdownGrace = 0
    let mock: InMemoryMock
    do {
        mock = try AppleIDMockServer.inMemory(configuration)
    } catch {
        return 0
    }

    let session = Session(mock: mock, scenario: scenario, knobs: knobs, now: scenario.clock.start ?? realTime,
                          secrets: clientSecrets(scenario, now: scenario.clock.start ?? realTime))
    let done = DispatchSemaphore(value: 0)
    Task {
        await session.run()
        await mock.stop()
        done.signal()
    }
    done.wait()
    return 0
}

/// A valid client secret for every client whose team registers the default developer key.
private func clientSecrets(_ scenario: Scenario, now: Int64) -> [String: String] {
    guard let developerKey, let developerPEM = try? developerKey.publicKey.pem else { return [:] }
    var secrets: [String: String] = [:]
    for team in scenario.teams {
        guard let key = team.developerKeys.first(where: { (try? P256PublicKey(pem: $0.publicKeyPEM).pem) == developerPEM }) else {
            continue
        }
        for client in team.clients.prefix(8) where secrets[client.clientID] == nil {
            let cacheKey = "\(team.teamID)|\(key.keyID)|\(client.clientID)|\(now)"
            if let cached = secretCache[cacheKey] {
                secrets[client.clientID] = cached
            } else if let secret = try? ClientSecret.make(teamID: team.teamID, keyID: key.keyID, clientID: client.clientID,
                                                          privateKey: developerKey, issuedAt: now - 60) {
                if secretCache.count >= 4096 { secretCache.removeAll() }
                secretCache[cacheKey] = secret
                secrets[client.clientID] = secret
            }
        }
    }
    return secrets
}

/// A notification receiver that is never reached: no input makes the fuzzer send anything.
private struct Unreachable: NotificationTransport {
    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt {
        NotificationRecord.Attempt(at: 0, status: nil, error: "the fuzzer sends nothing")
    }
}

/// One client's conversation with the mock over a scenario.
private struct Session: Sendable {
    let mock: InMemoryMock
    let scenario: Scenario
    let knobs: Knobs
    let now: Int64
    /// Client secrets by client id.
    let secrets: [String: String]

    /// The PKCE verifier every authorize request with PKCE on uses.
    static let verifier = "fuzz-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"

    func run() async {
        await send(get("/auth/keys"), expecting: 200)
        await send(get("/.well-known/openid-configuration"), expecting: 200)
        await send(get("/__mock/health"), expecting: 200)

        guard let firstUser = scenario.users.first?.id else { return }
        let user = scenario.users[knobs.userIndex % scenario.users.count].id
        // Probe F2: an id_token for the first user with the default client (the first team's first).
        await send(postJSON("/__mock/id-token", ["user": .string(firstUser)]), expecting: 200)

        let clients = scenario.teams.flatMap { $0.clients.prefix(4) }.prefix(6)
        var subjects: [String: String] = [:]  // team id → the user's sub there
        for client in clients {
            var body: JSONObject = ["user": .string(user), "client_id": .string(client.clientID), "hide_email": .bool(knobs.hideEmail)]
            if let nonce = knobs.nonce { body["nonce"] = .string(nonce) }
            let answer = await send(postJSON("/__mock/id-token", body))
            if let team = team(of: client.clientID), subjects[team.teamID] == nil, let sub = json(answer)?["sub"]?.stringValue {
                subjects[team.teamID] = sub
            }
        }
        for path in ["/__mock/id-token", "/__mock/authorize", "/__mock/sign-in"] {
            await send(post(path, body: knobs.rawJSON, contentType: "application/json"))
        }

        // Web: the Services IDs with their first redirect URI.
        for client in scenario.teams.flatMap(\.clients).filter({ $0.kind == .servicesID }).prefix(2) {
            await web(client, user: user)
        }
        await send(get("/auth/authorize"))
        await send(get("/auth/authorize?" + knobs.rawQuery))
        await send(post("/auth/authorize", body: knobs.rawForm, contentType: "application/x-www-form-urlencoded"))

        // Native: the App IDs.
        for client in scenario.teams.flatMap(\.clients).filter({ $0.kind == .appID }).prefix(2) {
            var body: JSONObject = ["user": .string(user), "client_id": .string(client.clientID), "hide_email": .bool(knobs.hideEmail)]
            if let scope = knobs.scope { body["scopes"] = .array(scope.split(separator: " ").map { .string(String($0)) }) }
            if let nonce = knobs.nonce { body["nonce"] = .string(nonce) }
            let answer = await send(postJSON("/__mock/sign-in", body))
            if let code = json(answer)?["authorizationCode"]?.stringValue {
                await redeem(code, client: client, redirectURI: nil, verifier: nil)
            }
        }

        await migrate(subjects: subjects)

        for path in ["/auth/token", "/auth/revoke", "/auth/usermigrationinfo"] {
            await send(post(path, body: knobs.rawForm, contentType: "application/x-www-form-urlencoded"))
        }
        await send(post("/auth/token", body: knobs.rawJSON, contentType: "application/json"))

        // Account events, a clock move and a key rotation: what the feed, the log and the dashboard render.
        for type in ["email-disabled", "consent-revoked"] {
            await send(postJSON("/__mock/events", ["type": .string(type), "user": .string(user),
                                                   "client_id": .string(clients.first?.clientID ?? "")]))
        }
        await send(post("/__mock/events", body: knobs.rawJSON, contentType: "application/json"))
        await send(post("/__mock/clock", body: knobs.rawJSON, contentType: "application/json"))
        await send(postJSON("/__mock/clock", ["advance": .int(Int64(knobs.flags) * 3600)]))
        await send(post("/__mock/keys/rotate", body: Array("{}".utf8), contentType: "application/json"))

        // Every read route; the journal and the dashboard filtered by the raw query word.
        for target in ["/__mock/events?limit=1000", "/__mock/notifications", "/__mock/keys", "/__mock/users", "/__mock/clock",
                       "/__mock/faults", "/__mock/mail", "/__mock/requests", "/__mock/requests?" + knobs.rawQuery,
                       "/__mock/requests/count?" + knobs.rawQuery, "/__mock/requests?control=false&limit=1", "/__mock/dashboard",
                       "/__mock/dashboard?" + knobs.rawQuery, "/__mock/events?" + knobs.rawQuery] {
            await send(get(target))
        }
        await send(get("/__mock/health"), expecting: 200)
        // The journal lists no more than it counts (a page may stop at its byte limit).
        let listed = json(await send(get("/__mock/requests?limit=1000")))?["requests"]?.arrayValue?.count ?? 0
        let counted = json(await send(get("/__mock/requests/count")))?["count"]?.intValue ?? 0
        invariant(listed > 0 && Int64(listed) <= counted, "the journal lists \(listed) entries but counts \(counted)")
    }

    /// GET and POST /auth/authorize, then POST /__mock/authorize and redeeming its code.
    private func web(_ client: Scenario.Client, user: String) async {
        let redirectURI = client.redirectURIs.first ?? knobs.extra ?? ""
        var parameters = [("client_id", client.clientID), ("redirect_uri", redirectURI), ("response_type", knobs.responseType)]
        if let mode = knobs.responseMode { parameters.append(("response_mode", mode)) }
        if let scope = knobs.scope { parameters.append(("scope", scope)) }
        if let state = knobs.state { parameters.append(("state", state)) }
        if let nonce = knobs.nonce { parameters.append(("nonce", nonce)) }
        if knobs.usesPKCE {
            parameters.append(("code_challenge", Base64URL.encode(SHA256.hash(Array(Self.verifier.utf8)))))
            parameters.append(("code_challenge_method", "S256"))
        }
        let consent = await send(get("/auth/authorize?" + HTTPForm.encode(parameters)))

        // The consent page's own value (its hidden mock_page), as a browser would send it back.
        let page = String(decoding: consent.body, as: UTF8.self)
        let ticket = page.range(of: #"name="mock_page" value=""#).map { String(page[$0.upperBound...].prefix(32)) } ?? ""
        var choices = parameters + [("mock_page", ticket), ("mock_action", knobs.cancels ? "cancel" : "continue"), ("mock_user", user),
                                    ("mock_email", knobs.hideEmail ? "hide" : "share")]
        if let name = knobs.extra { choices.append(("mock_given_name", name)) }
        await send(post("/auth/authorize", body: Array(HTTPForm.encode(choices).utf8), contentType: "application/x-www-form-urlencoded"))

        var body = JSONObject()
        for (name, value) in parameters { body[name] = .string(value) }
        body["user"] = .string(user)
        body["hide_email"] = .bool(knobs.hideEmail)
        body["cancel"] = .bool(knobs.cancels)
        if let name = knobs.extra { body["given_name"] = .string(name) }
        let answer = await send(postJSON("/__mock/authorize", body))
        if let code = Self.code(in: json(answer)) {
            await redeem(code, client: client, redirectURI: redirectURI, verifier: knobs.usesPKCE ? Self.verifier : nil)
        }
    }

    /// Exchanges `code`, refreshes, replays the code, revokes, and refreshes again.
    private func redeem(_ code: String, client: Scenario.Client, redirectURI: String?, verifier: String?) async {
        let secret = secrets[client.clientID] ?? knobs.extra ?? "x"
        var exchange = [("grant_type", "authorization_code"), ("code", code), ("client_id", client.clientID), ("client_secret", secret)]
        if let redirectURI { exchange.append(("redirect_uri", redirectURI)) }
        if let verifier { exchange.append(("code_verifier", verifier)) }
        let exchanged = await send(postForm("/auth/token", exchange))
        let replayed = await send(postForm("/auth/token", exchange))
        invariant(exchanged.status.code != 200 || replayed.status.code != 200, "a code redeemed twice: \(code)")

        guard let refreshToken = json(exchanged)?["refresh_token"]?.stringValue else { return }
        let refresh = [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", client.clientID), ("client_secret", secret)]
        let refreshed = await send(postForm("/auth/token", refresh))
        let revoked = await send(postForm("/auth/revoke", [("token", refreshToken), ("token_type_hint", "refresh_token"),
                                                          ("client_id", client.clientID), ("client_secret", secret)]))
        let again = await send(postForm("/auth/token", refresh))
        invariant(refreshed.status.code != 200 || revoked.status.code != 200 || again.status.code != 200,
                  "a refresh token still refreshes after its client revoked it")
    }

    /// Client credentials for the first two teams, then a transfer from the first to the second.
    private func migrate(subjects: [String: String]) async {
        var tokens: [String: (client: Scenario.Client, token: String)] = [:]
        for team in scenario.teams.prefix(2) {
            guard let client = team.clients.first else { continue }
            let answer = await send(postForm("/auth/token", [("grant_type", "client_credentials"), ("scope", "user.migration"),
                                                             ("client_id", client.clientID), ("client_secret", secrets[client.clientID] ?? "x")]))
            if let token = json(answer)?["access_token"]?.stringValue { tokens[team.teamID] = (client, token) }
        }
        guard let from = scenario.teams.first, let sending = tokens[from.teamID] else { return }
        let to = scenario.teams.dropFirst().first
        let target = to?.teamID ?? knobs.extra ?? from.teamID
        let answer = await send(postForm("/auth/usermigrationinfo", [("sub", subjects[from.teamID] ?? ""), ("target", target),
                                                                       ("client_id", sending.client.clientID),
                                                                       ("client_secret", secrets[sending.client.clientID] ?? "x")],
                                         bearer: sending.token))
        await send(post("/auth/usermigrationinfo", body: knobs.rawForm, contentType: "application/x-www-form-urlencoded", bearer: sending.token))
        guard let to, let receiving = tokens[to.teamID], let transferSubject = json(answer)?["transfer_sub"]?.stringValue else { return }
        await send(postForm("/auth/usermigrationinfo", [("transfer_sub", transferSubject), ("client_id", receiving.client.clientID),
                                                          ("client_secret", secrets[receiving.client.clientID] ?? "x")],
                            bearer: receiving.token))
    }

    private func team(of clientID: String) -> Scenario.Team? {
        scenario.teams.first { $0.clients.contains { $0.clientID == clientID } }
    }

    /// The code in a `/__mock/authorize` answer: `form.code`, or `code` in the `url`'s query or fragment.
    private static func code(in answer: JSONObject?) -> String? {
        guard let answer else { return nil }
        if let code = answer["form"]?.objectValue?["code"]?.stringValue { return code }
        guard let url = answer["url"]?.stringValue, let mark = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return nil }
        return (try? HTTPForm(decoding: Array(url[url.index(after: mark)...].utf8)))?["code"]
    }

    private func json(_ response: HTTPResponse) -> JSONObject? {
        (try? JSONParser.parse(response.body))?.objectValue
    }

    private func headers(contentType: String?, bearer: String? = nil) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add("Host", "127.0.0.1:8080")
        if let contentType { headers.add("Content-Type", contentType) }
        if let bearer { headers.add("Authorization", "Bearer " + bearer) }
        return headers
    }

    private func get(_ target: String) -> HTTPRequest {
        HTTPRequest(method: .get, target: target, headers: headers(contentType: nil))
    }

    private func post(_ path: String, body: [UInt8], contentType: String, bearer: String? = nil) -> HTTPRequest {
        HTTPRequest(method: .post, target: path, headers: headers(contentType: contentType, bearer: bearer), body: body)
    }

    private func postForm(_ path: String, _ pairs: [(String, String)], bearer: String? = nil) -> HTTPRequest {
        post(path, body: Array(HTTPForm.encode(pairs).utf8), contentType: "application/x-www-form-urlencoded", bearer: bearer)
    }

    private func postJSON(_ path: String, _ object: JSONObject) -> HTTPRequest {
        post(path, body: JSONWriter.compact(.object(object)), contentType: "application/json")
    }

    /// Answers `request` and checks what every response promises.
    @discardableResult
    private func send(_ request: HTTPRequest, expecting expected: Int? = nil) async -> HTTPResponse {
        let response = await mock.respond(to: request)
        let code = response.status.code
        invariant((200..<600).contains(code), "status \(code) outside 200..<600\n\(describe(request, response))")
        invariant(code != 500, "500: an unexpected handler error\n\(describe(request, response))")
        for field in response.headers {
            invariant(!field.name.isEmpty && field.name.utf8.allSatisfy(Self.isTokenByte), "header name \(field.name.debugDescription) is not a token\n\(describe(request, response))")
            invariant(field.value.utf8.allSatisfy { $0 == 9 || ($0 >= 32 && $0 != 127) },
                      "header \(field.name) has a control byte: \(field.value.debugDescription)\n\(describe(request, response))")
        }
        invariant(!(code == 204 || code == 304) || response.body.isEmpty, "a \(code) with a body\n\(describe(request, response))")
        if let expected { invariant(code == expected, "expected \(expected)\n\(describe(request, response))") }
        return response
    }

    /// tchar (RFC 9110 §5.6.2).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}
