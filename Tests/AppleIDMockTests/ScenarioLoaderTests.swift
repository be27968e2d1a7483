@testable import AppleIDMock
import JOSE
@testable import MiniHTTP
import XCTest

final class ScenarioLoaderTests: XCTestCase {
    /// The default scenario as a mutable JSON object, for building broken twins.
    private func defaultObject() -> JSONObject {
        guard case .object(let object) = Scenario.default.json else { fatalError("scenario JSON is an object") }
        return object
    }

    private func problems(_ object: JSONObject, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        problems(JSONWriter.compact(.object(object)), file: file, line: line)
    }

    private func problems(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> [String] {
        do {
            _ = try Scenario.load(json: bytes)
            XCTFail("expected the scenario to be rejected", file: file, line: line)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    private func editing(_ path: [Any], _ value: JSONValue?) -> JSONObject {
        func edit(_ node: JSONValue, _ rest: ArraySlice<Any>) -> JSONValue? {
            guard let step = rest.first else { return value }
            switch (node, step) {
            case (.object(var object), let key as String):
                object[key] = object[key].flatMap { edit($0, rest.dropFirst()) } ?? (rest.count == 1 ? value : nil)
                return .object(object)
            case (.array(var items), let index as Int):
                if let replaced = edit(items[index], rest.dropFirst()) { items[index] = replaced } else { items.remove(at: index) }
                return .array(items)
            default:
                fatalError("bad edit path")
            }
        }
        guard case .object(let object) = edit(.object(defaultObject()), path[...]) else { fatalError() }
        return object
    }

    func testScenario_DefaultRoundTripsThroughPrettyJSON() throws {
        let loaded = try Scenario.load(json: Array(Scenario.default.prettyJSON.utf8))
        XCTAssertEqual(loaded, Scenario.default)
    }

    func testScenario_MinimalFileGetsDefaults() throws {
        let minimal = """
        {"teams":[{"team_id":"ABCDE12345","developer_keys":[{"key_id":"KEY1234567","public_key":\(JSONWriter.compact(.string(Scenario.defaultDeveloperPublicKey)).string)}],
          "clients":[{"client_id":"org.example.app","type":"app_id"}]}],
         "users":[{"id":"carol","email":"carol@example.org"}]}
        """
        let scenario = try Scenario.load(json: Array(minimal.utf8))
        XCTAssertEqual(scenario.lifetimes, Scenario.Lifetimes())
        XCTAssertEqual(scenario.compatibility, Compatibility())
        XCTAssertEqual(scenario.users[0].realUserStatus, 2)
        XCTAssertEqual(scenario.signingKeys.count, 3)
    }

    func testScenario_RejectsRedirectURIThatIsNotAbsolute_NamingItsPath() {
        let broken = editing(["teams", 0, "clients", 1, "redirect_uris", 0], "callback")
        XCTAssertEqual(problems(broken), ["teams[0].clients[1].redirect_uris[0]: expected an absolute URL"])
    }

    func testScenario_EmailSourcesAndMail_ReadBack_BadValuesNamedAtTheirPath() throws {
        // The built-in team sends from example.com; the mailbox defaults round-trip.
        let loaded = try Scenario.load(json: JSONWriter.compact(.object(defaultObject())))
        XCTAssertEqual(loaded.teams[0].emailSources, Scenario.EmailSources(domains: ["example.com"]))
        XCTAssertEqual(loaded.mail, Scenario.MailSettings())
        var object = defaultObject()
        guard case .array(var teams) = object["teams"], case .object(var team) = teams[0] else { return XCTFail("teams") }
        team["email_sources"] = .object(["domains": .array(["Mail.Example.COM", "bad_domain", "x"]), "addresses": .array(["noreply@example.org", "nobody"])])
        teams[0] = .object(team)
        object["teams"] = .array(teams)
        object["mail"] = .object(["capacity": .int(0), "max_bytes": .int(10)])
        XCTAssertEqual(problems(object), [
            "teams[0].email_sources.domains[1]: expected a mail domain such as mail.example.com",
            "teams[0].email_sources.domains[2]: expected a mail domain such as mail.example.com",
            "teams[0].email_sources.addresses[1]: expected an email address",
            "mail.capacity: expected an integer from 1 to 100000, found 0",
            "mail.max_bytes: expected an integer from 1024 to 1073741824, found 10",
        ])
        // The twin: good values load, domains and addresses lower-cased.
        team["email_sources"] = .object(["domains": .array(["Mail.Example.COM"]), "addresses": .array(["NoReply@Example.org"])])
        teams[0] = .object(team)
        object["teams"] = .array(teams)
        object["mail"] = .object(["capacity": .int(5)])
        let good = try Scenario.load(json: JSONWriter.compact(.object(object)))
        XCTAssertEqual(good.teams[0].emailSources, Scenario.EmailSources(domains: ["mail.example.com"], addresses: ["noreply@example.org"]))
        XCTAssertTrue(good.teams[0].emailSources.allow("news@MAIL.example.com"))
        XCTAssertFalse(good.teams[0].emailSources.allow("news@example.com"))
        XCTAssertEqual(good.mail.capacity, 5)
        // At most 100 sources a team.
        team["email_sources"] = .object(["domains": .array((0...100).map { .string("d\($0).example.com") })])
        teams[0] = .object(team)
        object["teams"] = .array(teams)
        XCTAssertEqual(problems(object), ["teams[0].email_sources: expected at most 100 domains and addresses together"])
    }

    func testAtScale_Scenario_SizeIsTheFilesOwn_SoTwentyThousandUsersLoadFromAFileAndFromSwift() async throws {
        // 20,000 users: under the former 4 MiB limit as a compact file, over it once printed with
        // every default (the form the limit used to be checked on).
        var scenario = Scenario.default
        scenario.users += (0..<20_000).map { Scenario.User(id: "u\($0)", email: "u\($0)@example.com", givenName: "U", familyName: "\($0)") }
        guard case .object(var top) = scenario.json else { return XCTFail("the scenario is an object") }
        let compact = JSONWriter.compact(.object(top))
        XCTAssertLessThan(compact.count, 4 * 1024 * 1024)
        XCTAssertGreaterThan(scenario.prettyJSON.utf8.count, 4 * 1024 * 1024)
        let directory = NSTemporaryDirectory() + "/scenario-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/users.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(compact)))
        XCTAssertEqual(try Scenario.load(path: path).users.count, 20_003)
        // Built in Swift, the same scenario serves: the rules run on its value, not on printed bytes.
        let mock = try inMemoryMock { $0.scenario = scenario }
        addTeardownBlock { await mock.stop() }
        let state = await mock.get("/__mock/credential-state?user=\(teamSub("u19999"))&client_id=com.example.app")
        XCTAssertEqual(state.text, #"{"state":"notFound"}"#)
        // The twins: one bad user among them is named by its path, and a file over the limit by its own size.
        top["users"] = .array((scenario.users.map(\.json)) + [["id": "bad id", "email": "x@example.com"]])
        XCTAssertEqual((assertThrows(try Scenario.load(json: JSONWriter.compact(.object(top)))) as? ScenarioError)?.problems.map(\.path),
                       ["users[20003].id"])
        let big = directory + "/big.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: Data(repeating: 0x20, count: Scenario.maxFileBytes + 1)))
        XCTAssertEqual((assertThrows(try Scenario.load(path: big)) as? ScenarioError)?.problems,
                       [.init(path: "$", message: "expected at most 33554432 bytes, found 33554433")])
    }

    func testAtScale_Scenario_OfMoreThan100000Users_IsRefusedNamingUsers_AndOf100000Loads() throws {
        func file(users: Int) -> [UInt8] {
            var object = defaultObject()
            object["users"] = .array((0..<users).map { .object(["id": .string("u\($0)"), "email": .string("u\($0)@example.com")]) })
            return JSONWriter.compact(.object(object))
        }
        XCTAssertEqual(problems(file(users: 100_001)),
                       ["users: expected at most 100000 users, found 100001 (the most the mock holds, with those added at run time)"])
        XCTAssertEqual(try Scenario.load(json: file(users: 100_000)).users.count, 100_000)
    }

    func testScenario_RejectsUnknownKeys() {
        var object = defaultObject()
        object["colour"] = "blue"
        XCTAssertEqual(problems(object), [
            "colour: unknown key (expected one of: teams, users, signing_keys, lifetimes, compatibility, auto_approve, clock, events, seed, journal, faults, mail)",
        ])
        let nested = editing(["users", 0, "nickname"], "al")
        XCTAssertEqual(problems(nested).first?.hasPrefix("users[0].nickname: unknown key"), true)
    }

    func testScenario_RejectsWrongTypesAndRanges() {
        XCTAssertEqual(problems(editing(["users", 1, "hide_email"], "yes")), ["users[1].hide_email: expected true or false, found \"yes\""])
        XCTAssertEqual(problems(editing(["users", 0, "real_user_status"], 3)), ["users[0].real_user_status: expected an integer from 0 to 2, found 3"])
        XCTAssertEqual(problems(editing(["lifetimes", "authorization_code"], 0)), ["lifetimes.authorization_code: expected an integer from 1 to 31622400, found 0"])
        XCTAssertEqual(problems(editing(["compatibility", "email_verified"], "yes")),
                       ["compatibility.email_verified: expected \"boolean\" or \"string\", found \"yes\""])
        XCTAssertEqual(problems(editing(["teams"], .object(JSONObject()))), ["teams: expected an array, found an object"])
    }

    func testScenario_RejectsMissingRequiredKeys() {
        XCTAssertEqual(problems(editing(["teams", 0, "team_id"], nil)), ["teams[0].team_id: missing required key"])
        XCTAssertEqual(problems(editing(["users"], nil)), ["users: missing required key"])
        XCTAssertEqual(problems(editing(["teams", 0, "clients", 1, "primary_app_id"], .null)),
                       ["teams[0].clients[1].primary_app_id: missing required key (a Services ID is grouped with a primary App ID)"])
    }

    func testScenario_RejectsBadIdentifiersAndKeys() {
        XCTAssertEqual(problems(editing(["teams", 0, "team_id"], "team1")),
                       ["teams[0].team_id: expected a 10-character Team ID of upper-case letters and digits"])
        XCTAssertEqual(problems(editing(["teams", 0, "developer_keys", 0, "public_key"], "not a key")),
                       ["teams[0].developer_keys[0].public_key: expected a PEM P-256 public key (-----BEGIN PUBLIC KEY-----)"])
        XCTAssertEqual(problems(editing(["users", 0, "email"], "alice")), ["users[0].email: expected an email address"])
    }

    /// The default scenario's one key under these ids, with these primary App IDs (nil: none).
    private func keys(_ entries: [(String, String?)]) -> JSONValue {
        .array(entries.map { id, primary in
            var key: JSONObject = ["key_id": .string(id), "public_key": .string(Scenario.defaultDeveloperPublicKey)]
            if let primary { key["primary_app_id"] = .string(primary) }
            return .object(key)
        })
    }

    func testScenario_PropagationSeconds_OnAClientAndAKey_FromZeroToAWeek_NamingThePath() throws {
        for path in [["teams", 0, "clients", 1, "propagation_seconds"], ["teams", 0, "developer_keys", 0, "propagation_seconds"]] as [[Any]] {
            let shown = path.map { "\($0)" }.joined(separator: ".").replacingOccurrences(of: ".0.", with: "[0].").replacingOccurrences(of: ".1.", with: "[1].")
            XCTAssertEqual(problems(editing(path, .int(604_801))), ["\(shown): expected an integer from 0 to 604800, found 604801"])
            XCTAssertEqual(problems(editing(path, .int(-1))), ["\(shown): expected an integer from 0 to 604800, found -1"])
            XCTAssertEqual(problems(editing(path, "3600")), ["\(shown): expected an integer from 0 to 604800, found \"3600\""])
            // Twins: a week, and none.
            let loaded = try Scenario.load(json: JSONWriter.compact(.object(editing(path, .int(604_800)))))
            XCTAssertEqual(path[2] as? String == "clients" ? loaded.teams[0].clients[1].propagationSeconds : loaded.teams[0].developerKeys[0].propagationSeconds, 604_800)
            XCTAssertEqual(try Scenario.load(json: Array(loaded.prettyJSON.utf8)), loaded)
            XCTAssertNotEqual(loaded, Scenario.default)
        }
        XCTAssertFalse(Scenario.default.prettyJSON.contains("propagation_seconds"))
    }

    func testScenario_RefusesAThirdKeyForAPrimaryAppID_AndAKeyBoundToNoPrimaryAppID_NamingThePath() throws {
        XCTAssertEqual(problems(editing(["teams", 0, "developer_keys"], keys([("MOCKKEY001", nil), ("MOCKKEY002", nil), ("MOCKKEY003", nil)]))),
                       ["teams[0].developer_keys: expected at most 2 Sign in with Apple keys for the primary App ID com.example.app, found 3 "
                        + "(Apple's limit; a key without primary_app_id counts for every primary App ID)"])
        XCTAssertEqual(problems(editing(["teams", 0, "developer_keys"], keys([("MOCKKEY001", "com.example.app"), ("MOCKKEY002", nil), ("MOCKKEY003", "com.example.app")]))),
                       ["teams[0].developer_keys: expected at most 2 Sign in with Apple keys for the primary App ID com.example.app, found 3 "
                        + "(Apple's limit; a key without primary_app_id counts for every primary App ID)"])
        XCTAssertEqual(problems(editing(["teams", 0, "developer_keys"], keys([("MOCKKEY001", "com.example.web")]))),
                       ["teams[0].developer_keys[0].primary_app_id: expected the client_id of a primary App ID of this team (an app_id without primary_app_id)"])
        // Twins: two keys, with or without their primary App ID, load; a second primary App ID takes two of its own.
        let two = try Scenario.load(json: JSONWriter.compact(.object(editing(["teams", 0, "developer_keys"],
                                                                              keys([("MOCKKEY001", nil), ("MOCKKEY002", "com.example.app")])))))
        XCTAssertEqual(two.teams[0].developerKeys.map(\.primaryAppID), [nil, "com.example.app"])
        XCTAssertEqual(try Scenario.load(json: Array(two.prettyJSON.utf8)), two)
        var other = editing(["teams", 0, "developer_keys"], keys([("MOCKKEY001", "com.example.app"), ("MOCKKEY002", "com.example.app"),
                                                                  ("MOCKKEY003", "com.example.other"), ("MOCKKEY004", "com.example.other")]))
        guard case .array(var teams)? = other["teams"], case .object(var team) = teams[0], case .array(var clients)? = team["clients"] else { return XCTFail() }
        clients.append(["client_id": "com.example.other", "type": "app_id"])
        team["clients"] = .array(clients)
        teams[0] = .object(team)
        other["teams"] = .array(teams)
        XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(other))).teams[0].developerKeys.count, 4)
    }

    func testScenario_WebsiteURLsPerServicesID_AreTenForAnIndividualsTeam_AHundredForAnOrganizations() throws {
        func uris(_ count: Int) -> JSONValue { .array((0..<count).map { .string("https://app.example.com/callback/\($0)") }) }
        func individual(_ object: JSONObject) -> JSONObject {
            guard case .array(var teams)? = object["teams"], case .object(var team) = teams[0] else { return object }
            team["type"] = "individual"
            teams[0] = .object(team)
            var edited = object
            edited["teams"] = .array(teams)
            return edited
        }
        XCTAssertEqual(problems(individual(editing(["teams", 0, "clients", 1, "redirect_uris"], uris(11)))),
                       ["teams[0].clients[1].redirect_uris: expected at most 10 website URLs for a Services ID of an individual's team "
                        + "(Apple's limit: 10 for an individual, 100 for an organization; the team's type is individual)"])
        XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(individual(editing(["teams", 0, "clients", 1, "redirect_uris"], uris(10))))))
                        .teams[0].kind, .individual)
        // An organization (the default when type is absent): 100, and 101 refused.
        XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(editing(["teams", 0, "clients", 1, "redirect_uris"], uris(100)))))
                        .teams[0].kind, .organization)
        XCTAssertEqual(problems(editing(["teams", 0, "clients", 1, "redirect_uris"], uris(101))),
                       ["teams[0].clients[1].redirect_uris: expected at most 100 website URLs for a Services ID of an organization's team "
                        + "(Apple's limit: 10 for an individual, 100 for an organization; the team's type is organization)"])
        XCTAssertEqual(problems(editing(["teams", 0, "type"], "company")), [#"teams[0].type: expected "organization" or "individual", found "company""#])
    }

    func testScenario_RejectsDuplicatesAndDanglingReferences() {
        XCTAssertEqual(problems(editing(["users", 1, "id"], "alice")), ["users[1].id: duplicate user id \"alice\""])
        XCTAssertEqual(problems(editing(["teams", 0, "clients", 1, "client_id"], "com.example.app")),
                       ["teams[0].clients[1].client_id: duplicate client id \"com.example.app\" (client ids are unique across teams)",
                        "teams[0].clients[1].primary_app_id: expected the client_id of another app_id in this team"])
        XCTAssertEqual(problems(editing(["auto_approve"], ["user": "mallory"])),
                       ["auto_approve.user: expected the id of a user in users, found \"mallory\""])
    }

    func testScenario_StrictRedirectURIs_LoadsEitherWay_TheRuleHoldsPerRequest() throws {
        // The knob governs authorize requests (AuthorizeErrorTests); a scenario loads either way,
        // so the built-in localhost callback can stay registered while strict mode is tried.
        XCTAssertNoThrow(try Scenario.load(json: JSONWriter.compact(.object(defaultObject()))))
        XCTAssertTrue(try Scenario.load(json: JSONWriter.compact(.object(editing(["compatibility", "strict_redirect_uris"], true))))
            .compatibility.strictRedirectURIs)
        XCTAssertEqual(ScenarioRules.strictRedirectURI("http://app.example.com/cb"), "expected an https URL (strict_redirect_uris is on)")
        XCTAssertEqual(ScenarioRules.strictRedirectURI("https://10.0.0.1/cb"), "expected a domain name, not an IP address (strict_redirect_uris is on)")
        XCTAssertEqual(ScenarioRules.strictRedirectURI("https://localhost/cb"), "expected a domain name, not localhost (strict_redirect_uris is on)")
        XCTAssertEqual(ScenarioRules.strictRedirectURI("https://app.example.com/cb#x"), "expected no #fragment (strict_redirect_uris is on)")
        XCTAssertNil(ScenarioRules.strictRedirectURI("https://app.example.com/ok"))
    }

    func testScenario_StrictRedirectURIs_RefusesAnHTTPNotificationURL_NamingItsPath() throws {
        // The built-in scenario with `strict_redirect_uris` as given and a notification URL on the team and on its primary App ID.
        func scenario(strict: Bool, team: String, app: String) -> JSONObject {
            var object = editing(["compatibility", "strict_redirect_uris"], .bool(strict))
            guard case .array(var teams)? = object["teams"], case .object(var first) = teams[0],
                  case .array(var clients)? = first["clients"], case .object(var primary) = clients[0] else { fatalError("built-in shape") }
            primary["notification_url"] = .string(app)
            clients[0] = .object(primary)
            first["clients"] = .array(clients)
            first["notification_url"] = .string(team)
            teams[0] = .object(first)
            object["teams"] = .array(teams)
            return object
        }
        // Apple registers only HTTPS endpoints (docs/apple-behaviour.md §7 [D]): with the knob on, an
        // http one is refused as an http return URL is, wherever it is registered.
        XCTAssertEqual(problems(scenario(strict: true, team: "http://backend.example.com/apple", app: "https://backend.example.com/app")),
                       ["teams[0].notification_url: expected an https URL (strict_redirect_uris is on)"])
        XCTAssertEqual(problems(scenario(strict: true, team: "https://backend.example.com/apple", app: "http://127.0.0.1:9000/")),
                       ["teams[0].clients[0].notification_url: expected an https URL (strict_redirect_uris is on)"])
        XCTAssertEqual(ScenarioRules.strictNotificationURL("HTTP://backend.example.com/"), ScenarioRules.strictRedirectURI("http://backend.example.com/"))
        // A Swift-built scenario meets the same rule at start.
        guard case .scenario(let error)? = assertThrows(try startMock { configuration in
            configuration.scenario.compatibility.strictRedirectURIs = true
            configuration.scenario.teams[0].notificationURL = "http://backend.example.com/apple"
        }) as? AppleIDMockError else { return XCTFail("expected a scenario error") }
        XCTAssertEqual(error.problems.map(\.description), ["teams[0].notification_url: expected an https URL (strict_redirect_uris is on)"])
        // Twins: https loads with the knob on; without it, http loads too.
        let strict = try Scenario.load(json: JSONWriter.compact(.object(scenario(strict: true, team: "https://backend.example.com/apple",
                                                                                 app: "https://localhost:9443/"))))
        XCTAssertEqual(strict.teams[0].notificationURL, "https://backend.example.com/apple")
        let relaxed = try Scenario.load(json: JSONWriter.compact(.object(scenario(strict: false, team: "http://backend.example.com/apple",
                                                                                  app: "http://127.0.0.1:9000/"))))
        XCTAssertEqual(relaxed.teams[0].clients[0].notificationURL, "http://127.0.0.1:9000/")
    }

    func testScenario_TokenJSONBodyError_DefaultsToInvalidClient_ReadsItsFormerName_ButNotBoth() throws {
        XCTAssertEqual(Compatibility().tokenJSONBodyError, "invalid_client")
        XCTAssertEqual(problems(editing(["compatibility", "token_json_body_error"], "invalid_grant")),
                       [#"compatibility.token_json_body_error: expected "invalid_request" or "invalid_client""#])
        // The former name, as README documented it, still sets the knob.
        var object = editing(["compatibility", "token_json_body_error"], nil)
        guard case .object(var knobs)? = object["compatibility"] else { return XCTFail("compatibility is an object") }
        knobs["token_content_type_error"] = "invalid_request"
        object["compatibility"] = .object(knobs)
        XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(object))).compatibility.tokenJSONBodyError, "invalid_request")
        knobs["token_json_body_error"] = "invalid_client"
        object["compatibility"] = .object(knobs)
        XCTAssertEqual(problems(object), ["compatibility.token_content_type_error: expected only one of token_json_body_error and its former name token_content_type_error"])
    }

    func testScenario_Seed_RoundTripsThroughPrettyJSON_AndNullOrAbsentIsNone() throws {
        for seed: UInt64 in [0, 7, UInt64(Int64.max)] {
            var scenario = Scenario.default
            scenario.seed = seed
            XCTAssertEqual(try Scenario.load(json: Array(scenario.prettyJSON.utf8)), scenario, "\(seed)")
        }
        XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(editing(["seed"], 42)))).seed, 42)
        XCTAssertNil(try Scenario.load(json: JSONWriter.compact(.object(editing(["seed"], .null)))).seed)
        XCTAssertNil(try Scenario.load(json: JSONWriter.compact(.object(editing(["seed"], nil)))).seed)
    }

    func testScenario_Seed_RefusesAnythingButAnIntegerFrom0ToInt64Max_NamingItsPath() {
        let expected = "seed: expected an integer from 0 to 9223372036854775807, found "
        XCTAssertEqual(problems(editing(["seed"], -1)), [expected + "-1"])
        XCTAssertEqual(problems(editing(["seed"], .double(1.5))), [expected + "1.5"])
        XCTAssertEqual(problems(editing(["seed"], "7")), [expected + "\"7\""])
        XCTAssertEqual(problems(editing(["seed"], true)), [expected + "true"])
        // Beyond Int64 a JSON integer is no longer exact: refused, never rounded to another seed.
        XCTAssertEqual(problems(Array(#"{"seed":18446744073709551615}"#.utf8)).filter { $0.hasPrefix("seed") }, [expected + "1.8446744073709552e+19"])
        var scenario = Scenario.default
        scenario.seed = UInt64.max
        XCTAssertEqual(problems(Array(scenario.prettyJSON.utf8)).filter { $0.hasPrefix("seed") }.count, 1, "written inexactly, refused at load")
    }

    func testScenario_JournalCapacity_IsReadAndBounded_NamingItsPath() throws {
        XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(editing(["journal"], ["capacity": 5])))).journalCapacity, 5)
        var absent = defaultObject()
        absent["journal"] = nil
        XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(absent))).journalCapacity, 10_000, "the default")
        XCTAssertEqual(problems(editing(["journal"], ["capacity": 0])), ["journal.capacity: expected an integer from 1 to 100000, found 0"])
        XCTAssertEqual(problems(editing(["journal"], ["capacity": 100_001])), ["journal.capacity: expected an integer from 1 to 100000, found 100001"])
        XCTAssertEqual(problems(editing(["journal"], ["size": 5])).first?.hasPrefix("journal.size: unknown key"), true)
        var scenario = Scenario.default
        scenario.journalCapacity = 42
        XCTAssertEqual(try Scenario.load(json: Array(scenario.prettyJSON.utf8)).journalCapacity, 42, "written and read back")
    }

    func testScenario_ReportsEveryProblemAtOnce() {
        var object = editing(["users", 0, "email"], 5)
        object["lifetimes"] = ["id_token": "long"]
        XCTAssertEqual(problems(object), [
            "users[0].email: expected a string, found a number",
            "lifetimes.id_token: expected an integer from 1 to 31622400, found \"long\"",
        ])
    }

    func testScenario_RejectsInvalidJSONWithPosition() {
        let found = problems(Array("{\"teams\": [,]}".utf8))
        XCTAssertEqual(found.count, 1)
        XCTAssertTrue(found[0].hasPrefix("$: invalid JSON: line 1, column 12"), found[0])
        XCTAssertEqual(problems(Array("[]".utf8)), ["$: expected an object, found an array"])
    }

    func testScenario_RefusesNotificationURLsTheSenderRefuses_NamingThePath() throws {
        let refused = ["http://user:pw@127.0.0.1:9/x", "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://localhost:9/#frag",
                       "http://127.0.0.1:9\\@evil.example/", "http://127.0.0.1:9/x\\y", "http://127.0.0.1:9/x\u{e9}", "http://%31%32%37.0.0.1:9/"]
        for url in refused {
            XCTAssertEqual(problems(editing(["teams", 0, "notification_url"], .string(url))).first?.hasPrefix("teams[0].notification_url: expected"), true, url)
            XCTAssertNil(try? HTTPClient.Target(url), "the sender refuses \(url) too")
        }
        // The twins: what the sender takes, the loader takes (schemes are case-insensitive).
        for url in ["HTTP://127.0.0.1:9/x", "https://receiver.example:8443/apple?x=1", "http://[::1]:9/n"] {
            XCTAssertNoThrow(try Scenario.load(json: JSONWriter.compact(.object(editing(["teams", 0, "notification_url"], .string(url))))), url)
            XCTAssertNotNil(try? HTTPClient.Target(url), url)
        }
    }

    func testScenario_RefusesUserIdsShapedLikeASub_AndEmailsWithControlCharacters_NamingThePath() throws {
        XCTAssertEqual(problems(editing(["users", 1, "id"], .string(teamSub("alice")))),
                       ["users[1].id: expected an id that is not shaped like a sub (NNNNNN.<32 hex>.NNNN)"])
        for email in ["a\u{0}b@example.com", "a\tb@c", "a\r\nb@example.com", "a@example.com\n"] {
            XCTAssertEqual(problems(editing(["users", 1, "email"], .string(email))), ["users[1].email: expected an email address"], email)
        }
        // The twins.
        XCTAssertNoThrow(try Scenario.load(json: JSONWriter.compact(.object(editing(["users", 1, "id"], .string("923363.bob.6945"))))))
        XCTAssertNoThrow(try Scenario.load(json: JSONWriter.compact(.object(editing(["users", 1, "email"], .string("bob+tag@example.com"))))))
    }

    func testScenario_RefusesRedirectURIsWithNonASCIIBackslashOrBadPort_NamingThePath() throws {
        let path = "teams[0].clients[1].redirect_uris[0]"
        for uri in ["https://a.example/x\u{2028}y", "https://a.example/\u{85}x", "http://a.example/\u{a0}x", "https://a.example/\u{fc}n\u{ef}",
                    "https://a.example/x\\y", "https://a.example:99999/", "https://a.example:0/"] {
            XCTAssertEqual(problems(editing(["teams", 0, "clients", 1, "redirect_uris", 0], .string(uri))).first?.hasPrefix(path + ": expected"), true, uri)
        }
        // The twins: ASCII, percent-encoded, a port in range.
        for uri in ["https://a.example/%C3%BCn%C3%AF", "https://a.example:65535/cb?x=1", "http://localhost:3000/callback", "http://[::1]:3000/cb"] {
            XCTAssertNoThrow(try Scenario.load(json: JSONWriter.compact(.object(editing(["teams", 0, "clients", 1, "redirect_uris", 0], .string(uri))))), uri)
        }
    }

    func testAuthorizeLocation_PercentEncodesNonASCII_OfARedirectURIMadeInCode() {
        // A scenario built in Swift is not checked by the loader: Location still carries ASCII only.
        let delivery = Delivery(responseMode: .query, redirectURI: "https://a.example/\u{fc}\u{2028}x", parameters: [("code", "c"), ("state", "s")])
        XCTAssertEqual(AuthorizePages.location(delivery), "https://a.example/%C3%BC%E2%80%A8x?code=c&state=s")
        // The twin: an ASCII URI is written as it is.
        let ascii = Delivery(responseMode: .fragment, redirectURI: "https://a.example/%C3%BC?x=1", parameters: [("code", "c")])
        XCTAssertEqual(AuthorizePages.location(ascii), "https://a.example/%C3%BC?x=1#code=c")
    }
}

extension Array where Element == UInt8 {
    var string: String { String(decoding: self, as: UTF8.self) }
}
