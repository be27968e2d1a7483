@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `state import` takes only what the mock itself could have written (probe P1, P7): every
/// numeric field within the range the mock produces, refused with its JSON path otherwise, and a
/// state its own operations could have reached; a file patched in SQLite is refused at start or
/// served without a trap.
final class StateImportBoundsTests: XCTestCase {
    private var madePaths: [String] = []

    override func tearDown() {
        for path in madePaths {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        madePaths = []
        super.tearDown()
    }

    private func newPath(_ name: String = "import") -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
        madePaths.append(path)
        return path
    }

    /// The scenario the rich state is made with: the built-in one, frozen, rotating keys daily,
    /// its first team with a notification URL.
    private func scenario() -> Scenario {
        var scenario = Scenario.default
        scenario.clock = .init(start: frozenNow, frozen: true)
        scenario.signingKeys.rotation = .init(every: 86_400, publishAhead: 3600, retireAfter: 3600)
        scenario.teams[0].notificationURL = "http://receiver.test/notifications"
        return scenario
    }

    /// A state file holding most kinds of event and a delivered notification, made by a seeded
    /// mock driven over HTTP, then stopped; its export.
    private func richExport(reset: Bool = true) throws -> String {
        let path = newPath("rich")
        let server = try startMock { configuration in
            configuration.scenario = scenario()
            configuration.statePath = path
            configuration.seed = 7
            configuration.notificationTransport = RecordingTransport(status: 200)
        }
        let tokens = try server.webTokens(user: "alice")
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200)
        XCTAssertEqual(try server.postJSON("/__mock/users", #"{"id":"zoe","email":"zoe@example.com"}"#).status, 201)
        XCTAssertEqual(try server.postJSON("/__mock/events", #"{"type":"email-disabled","user":"bob","client_id":"com.example.app"}"#).status, 202)
        let log = try server.get("/__mock/notifications?wait=10")
        XCTAssertTrue(log.text.contains(#""outcome":"delivered""#), log.text)
        XCTAssertEqual(try server.postJSON("/__mock/keys/rotate", "{}").status, 200)
        XCTAssertEqual(try server.postJSON("/__mock/clock", #"{"advance":200000}"#).status, 200)
        XCTAssertEqual(try server.revoke(try XCTUnwrap(tokens["refresh_token"]?.stringValue)).status, 200)
        XCTAssertEqual(try server.nativeSignIn(user: "alice").status, 200)
        if reset {
            XCTAssertEqual(try server.postJSON("/__mock/reset", "{}").status, 200)
            XCTAssertEqual(try server.nativeSignIn(user: "alice").status, 200)
        }
        server.stop()
        return try StateArchive.export(path: path)
    }

    /// Every number in `value` outside `scenario` and `version`, with its path as import names it.
    private func numbers(_ value: JSONValue, path: String = "") -> [(path: String, value: JSONValue)] {
        switch value {
        case .int, .double: return [(path, value)]
        case .object(let object):
            return object.keys.filter { !path.isEmpty || ($0 != "scenario" && $0 != "version") }.flatMap { key in
                numbers(object[key]!, path: path.isEmpty ? key : "\(path).\(key)")
            }
        case .array(let items): return items.enumerated().flatMap { numbers($1, path: "\(path)[\($0)]") }
        default: return []
        }
    }

    /// `path` with array indexes as `[*]`, an event's own fields named after its type: one such
    /// shape stands for every field of its kind.
    private func shape(_ path: String, in archive: JSONValue) -> String {
        var shape = path.replacingOccurrences(of: #"\[\d+\]"#, with: "[*]", options: .regularExpression)
        if let index = capture(#"^events\[(\d+)\]\.event"#, in: path).flatMap(Int.init),
           case .string(let type)? = archive.objectValue?["events"]?.arrayValue?[index].objectValue?["event"]?.objectValue?["type"] {
            shape = shape.replacingOccurrences(of: "events[*].event", with: "events[*](\(type))")
        }
        return shape
    }

    /// `value` with the member at the dotted `path` (with `[n]` indexes) replaced.
    private func replacing(_ value: JSONValue, at path: String, with replacement: JSONValue) -> JSONValue {
        var keys: [Any] = []
        for part in path.split(separator: ".") {
            var name = Substring(part)
            var indexes: [Int] = []
            while let open = name.lastIndex(of: "["), name.hasSuffix("]") {
                indexes.insert(Int(name[name.index(after: open)..<name.index(before: name.endIndex)])!, at: 0)
                name = name[..<open]
            }
            keys.append(String(name))
            keys.append(contentsOf: indexes)
        }
        func replace(_ value: JSONValue, _ keys: ArraySlice<Any>) -> JSONValue {
            guard let first = keys.first else { return replacement }
            switch (value, first) {
            case (.object(var object), let key as String):
                object[key] = replace(object[key] ?? .null, keys.dropFirst())
                return .object(object)
            case (.array(var items), let index as Int):
                items[index] = replace(items[index], keys.dropFirst())
                return .array(items)
            default:
                return value
            }
        }
        return replace(value, keys[...])
    }

    /// The import of `archive`'s failure text (nil when it imported), the file it would make left absent.
    private func importFailure(_ archive: JSONValue, file: StaticString = #filePath, line: UInt = #line) -> String? {
        let path = newPath()
        do {
            try StateArchive.importing(JSONWriter.compact(archive), into: path)
            return nil
        } catch {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "a refused import left \(path)", file: file, line: line)
            return error.description
        }
    }

    // MARK: - P1: every numeric field

    func testStateImport_RefusesEachNumericFieldAt1e308OrMinusTwoToThe63_NamingItsPath_P1() throws {
        let exported = try richExport()
        let archive = try JSONParser.parse(exported)
        var shapes: [String: String] = [:]
        for (path, _) in numbers(archive) where shapes[shape(path, in: archive)] == nil { shapes[shape(path, in: archive)] = path }
        // Every kind of number this state holds: the probe counted 39 numeric fields in a version 1
        // export; version 2 keeps the log as delivery events and adds the fault stream; version 3
        // has the delivery events among the events.
        XCTAssertEqual(shapes.keys.sorted(), [
            "deliveries_forgotten",
            "events[*](account-event).account_event.at", "events[*](account-event).account_event.event_time",
            "events[*](clock-changed).clock.frozen_at", "events[*](clock-changed).clock.offset", "events[*](clock-changed).now",
            "events[*](code-issued).grant.auth_time", "events[*](code-issued).grant.consent_id", "events[*](code-issued).grant.expires_at",
            "events[*](code-redeemed).consent_id", "events[*](codes-expired).at", "events[*](codes-expired).count",
            "events[*](consent-granted).grant.at", "events[*](consent-granted).grant.consent_id", "events[*](consent-revoked).consent_id",
            "events[*](key-activated).at", "events[*](key-published).at", "events[*](key-published).step", "events[*](key-retired).at",
            "events[*](key-retired).step", "events[*](key-schedule-advanced).at", "events[*](notification-attempted).attempt.at",
            "events[*](notification-attempted).attempt.status", "events[*](notification-attempted).id", "events[*](reset).reset.clock.frozen_at",
            "events[*](reset).reset.clock.offset", "events[*](reset).reset.first_consent_id", "events[*](reset).reset.now",
            "events[*](tokens-issued).consent_id", "events[*](user-added).added_user.user.real_user_status", "events[*].at", "events[*].sequence",
            "fault_random.next_block", "genesis.clock.frozen_at", "genesis.clock.offset", "genesis.start", "jwks_order.next_block", "random.next_block",
        ])
        for path in shapes.values.sorted() {
            for extreme: JSONValue in [.double(1e308), .int(Int64.min)] {
                let failure = importFailure(replacing(archive, at: path, with: extreme))
                XCTAssertTrue(failure?.hasPrefix(path + ": ") == true, "\(path) = \(extreme): \(failure ?? "imported")")
            }
        }
        // The accepted twin: the export as it is imports, and the mock serves it on every route it renders times on.
        let path = newPath()
        XCTAssertGreaterThan(try StateArchive.importing(Array(exported.utf8), into: path), 10)
        let served = try startMock { configuration in
            configuration.scenario = scenario()
            configuration.statePath = path
            configuration.seed = 7
        }
        defer { served.stop() }
        for route in ["/__mock/clock", "/__mock/events?limit=1000", "/__mock/dashboard", "/__mock/notifications", "/__mock/keys", "/__mock/users"] {
            XCTAssertEqual(try served.get(route).status, 200, route)
        }
    }

    func testStateFile_PatchedInSQLiteOutOfRange_IsRefusedAtStart_AndAtItsEdges_IsServedOnEveryRoute_P1() throws {
        let exported = try richExport()
        let made = newPath("made")
        try StateArchive.importing(Array(exported.utf8), into: made)
        /// A copy of `made` with `sql` run on it.
        func patched(_ sql: String) throws -> String {
            let copy = newPath("patched")
            try FileManager.default.copyItem(atPath: made, toPath: copy)
            let database = try SQLiteDatabase(path: copy, create: false)
            try database.execute(sql)
            database.close()
            return copy
        }
        func startFailure(_ path: String) -> String? {
            do {
                let server = try startMock { configuration in
                    configuration.scenario = scenario()
                    configuration.statePath = path
                }
                server.stop()
                return nil
            } catch {
                return "\(error)"
            }
        }
        let offset = "json_set(value, '$.clock.offset', 1e19)"
        for (sql, expected) in [
            ("UPDATE meta SET value = \(offset) WHERE key = 'genesis'", "genesis.clock.offset: expected a number from -4326589695 to 4326589695"),
            ("UPDATE meta SET value = json_set(value, '$.start', -9223372036854775808) WHERE key = 'genesis'",
             "genesis.start: expected an integer from 0 to 4326589695"),
            ("UPDATE events SET at = 1e308 WHERE sequence = (SELECT max(sequence) FROM events)", "at expected a number of seconds from 0 to 4326589695"),
            ("UPDATE events SET sequence = 9223372036854775807 WHERE sequence = (SELECT max(sequence) FROM events)",
             "sequence expected an integer from 1 to 9007199254740991"),
            ("UPDATE events SET body = json_set(body, '$.grant.at', -9223372036854775808) WHERE type = 'consent-granted'",
             "event.grant.at: expected an integer from 0 to 4326589695"),
            ("UPDATE events SET body = json_set(body, '$.attempt.at', 1e308) WHERE type = 'notification-attempted'",
             "event.attempt.at: expected a number from 0 to 4326589695"),
        ] {
            let failure = startFailure(try patched(sql))
            XCTAssertTrue(failure?.contains(expected) == true, "\(sql): \(failure ?? "started")")
        }
        // The twin: the same fields at the very edges of what is accepted start, and every route
        // that renders them answers (the renderers convert without trapping).
        let upper = StoredRange.seconds.upperBound
        let edge = try patched("""
            UPDATE meta SET value = json_set(value, '$.clock.offset', \(StoredRange.offsets.upperBound)) WHERE key = 'genesis';
            UPDATE events SET at = \(StoredRange.instants.upperBound) WHERE sequence = (SELECT max(sequence) FROM events);
            UPDATE events SET body = json_set(body, '$.grant.at', \(upper)) WHERE type = 'consent-granted';
            UPDATE events SET body = json_set(body, '$.attempt.at', \(StoredRange.instants.upperBound)) WHERE type = 'notification-attempted';
            """)
        let server = try startMock { configuration in
            configuration.scenario = scenario()
            configuration.statePath = edge
        }
        defer { server.stop() }
        for route in ["/__mock/clock", "/__mock/events?limit=1000", "/__mock/dashboard", "/__mock/notifications", "/__mock/keys", "/__mock/users",
                      "/__mock/health", "/__mock/requests", "/auth/keys", "/.well-known/openid-configuration"] {
            XCTAssertEqual(try server.get(route).status, 200, route)
        }
        XCTAssertEqual(try server.nativeSignIn(user: "alice").status, 200)
    }

    func testRenderers_ConvertAnyTimeWithoutTrapping_P1() {
        for seconds in [1e19, -1e19, 1e308, -1e308, .infinity, -.infinity, .nan, Double(Int64.max), -0.0] {
            let whole = Int64(seconds: seconds)
            XCTAssertLessThanOrEqual(abs(whole), Int64(Int64.secondsBound), "\(seconds)")
            XCTAssertFalse(RFC3339.format(whole).isEmpty)
        }
        XCTAssertEqual(RFC3339.format(Int64.min), "0000-01-01T00:00:00Z")
        XCTAssertEqual(RFC3339.format(Int64.max), "9999-12-31T23:59:59Z")
        // The twin: ordinary times are exact.
        XCTAssertEqual(Int64(seconds: 1_700_000_000.9), 1_700_000_000)
        XCTAssertEqual(Int64(seconds: -1.5, rounding: .toNearestOrAwayFromZero), -2)
        XCTAssertEqual(RFC3339.format(1_700_000_000), "2023-11-14T22:13:20Z")
    }

    // MARK: - P7: states the mock could never produce

    /// `archive` with `event` appended after its last event.
    private func appending(_ archive: JSONValue, _ event: JSONValue) -> JSONValue {
        guard case .object(var object) = archive, case .array(var events)? = object["events"],
              case .object(let last)? = events.last, case .int(let sequence)? = last["sequence"] else { return archive }
        events.append(["sequence": .int(sequence + 1), "at": last["at"] ?? 0, "event": event])
        object["events"] = .array(events)
        return .object(object)
    }

    /// The stored user-added event for `id` with these identifiers.
    private func userAdded(_ id: String, subjects: [String], relayAddresses: [String]) -> JSONValue {
        ["type": "user-added", "added_user": ["user": Scenario.User(id: id, email: "\(id)@example.com", givenName: "I", familyName: "M").json,
                                              "subjects": .array(subjects.map(JSONValue.string)),
                                              "relay_addresses": .array(relayAddresses.map(JSONValue.string))]]
    }

    func testStateImport_RefusesStatesTheMockCouldNeverProduce_NamingTheEventField_P7() throws {
        let archive = try JSONParser.parse(try richExport(reset: false))
        let events = try XCTUnwrap(archive.objectValue?["events"]?.arrayValue)
        let last = events.count
        let teams = Scenario.default.teams
        func identifiers(_ id: String) -> ([String], [String]) {
            let added = AddedUser(user: Scenario.User(id: id, email: "x@example.com", givenName: "", familyName: ""), teams: teams)
            return (added.subjects, added.relayAddresses)
        }
        let (zoeSubjects, zoeRelays) = identifiers("zoe")
        let (freshSubjects, freshRelays) = identifiers("imp1")
        let grant = try XCTUnwrap(events.compactMap { $0.objectValue?["event"] }.first { $0.objectValue?["type"] == "consent-granted" })
        func granted(_ change: (inout JSONObject) -> Void) -> JSONValue {
            var object = grant.objectValue!
            var inner = object["grant"]!.objectValue!
            change(&inner)
            object["grant"] = .object(inner)
            return .object(object)
        }
        let activeKid = try XCTUnwrap(archive.objectValue?["events"]?.arrayValue?.compactMap { event -> String? in
            guard event.objectValue?["event"]?.objectValue?["type"] == "key-activated" else { return nil }
            return event.objectValue?["event"]?.objectValue?["kid"]?.stringValue
        }.last)
        let cases: [(JSONValue, String?)] = [
            // Another user with zoe's sub and relay address; its twin with its own.
            (userAdded("imp1", subjects: zoeSubjects, relayAddresses: zoeRelays), "events[\(last)].event.added_user.subjects[0]: the sub of user \"zoe\" already"),
            (userAdded("imp1", subjects: freshSubjects, relayAddresses: zoeRelays),
             "events[\(last)].event.added_user.relay_addresses[0]: the relay address of user \"zoe\" already"),
            (userAdded("imp1", subjects: freshSubjects, relayAddresses: freshRelays), nil),
            // A relay address off the relay domains (probe Q8); its twin on the other relay domain.
            (userAdded("imp1", subjects: freshSubjects, relayAddresses: ["victim@gmail.com"] + freshRelays.dropFirst()),
             "events[\(last)].event.added_user.relay_addresses[0]: expected a private relay address (10 lower-case letters and digits on "
                + "private.icloud.com, privaterelay.appleid.com, icloud.com)"),
            (userAdded("imp1", subjects: freshSubjects, relayAddresses: ["victim@icloud.com"] + freshRelays.dropFirst()),
             "events[\(last)].event.added_user.relay_addresses[0]: expected a private relay address (10 lower-case letters and digits on "
                + "private.icloud.com, privaterelay.appleid.com, icloud.com)"),
            (userAdded("imp1", subjects: freshSubjects,
                       relayAddresses: freshRelays.map { $0.replacingOccurrences(of: "privaterelay.appleid.com", with: "private.icloud.com") }), nil),
            (userAdded("imp1", subjects: freshSubjects,
                       relayAddresses: freshRelays.map { $0.replacingOccurrences(of: "privaterelay.appleid.com", with: "icloud.com") }), nil),
            // A password change renewing a consent that does not exist; its twin renewing none.
            (["type": "password-changed", "user_id": "zoe", "renewals": [["team_id": "MOCKTEAM01", "group_id": "com.example.app", "from": 77777, "to": 900]]],
             "events[\(last)].event.renewals[0].from: no live consent 77777 of zoe for com.example.app in MOCKTEAM01"),
            (["type": "password-changed", "user_id": "zoe", "renewals": []], nil),
            // zoe added twice.
            (userAdded("zoe", subjects: freshSubjects, relayAddresses: freshRelays), "events[\(last)].event.added_user.user.id: user \"zoe\" exists already"),
            // A consent for a user or a team that does not exist; the twin a new consent of zoe's.
            (granted { $0["user_id"] = "ghost"; $0["consent_id"] = 900 }, "events[\(last)].event.grant.user_id: no user \"ghost\""),
            (granted { $0["team_id"] = "NOTEAM"; $0["consent_id"] = 900 }, "events[\(last)].event.grant.team_id: no team NOTEAM in the scenario"),
            (granted { $0["user_id"] = "zoe"; $0["consent_id"] = 900 }, nil),
            // A code under a consent that does not exist.
            (["type": "code-issued", "code": "c-imported", "grant": ["client_id": "com.example.app", "redirect_uri": .null, "consent_id": 77777,
                                                                    "team_id": "MOCKTEAM01", "user_id": "alice", "nonce": .null, "code_challenge": .null,
                                                                    "code_challenge_method": .null, "auth_time": .int(frozenNow), "expires_at": .int(frozenNow + 300),
                                                                    "flow": "native", "first_authorization": false, "defect": .null]],
             "events[\(last)].event.grant.consent_id: no live consent 77777 of alice for com.example.app"),
            // The signing key retired, an unknown key activated; the twin, the signing key activated again.
            (["type": "key-retired", "kid": .string(activeKid), "at": .int(frozenNow), "step": .null],
             "events[\(last)].event.kid: key \(activeKid) signs: the signing key is never retired"),
            (["type": "key-activated", "kid": "NoSuchKid1", "at": .int(frozenNow)], "events[\(last)].event.kid: no published key NoSuchKid1"),
            (["type": "key-activated", "kid": .string(activeKid), "at": .int(frozenNow)], nil),
        ]
        for (event, expected) in cases {
            XCTAssertEqual(importFailure(appending(archive, event)), expected, "\(event)")
        }
        // A consent id granted before cannot be granted again: the rich state's own grant, once more.
        XCTAssertTrue(importFailure(appending(archive, grant))?.contains("was granted already") == true)
        // The sequence at the integer maximum (the deliverer then "fell 9223372036854775654 events behind"); the twin at the bound.
        let top = appending(archive, userAdded("imp1", subjects: freshSubjects, relayAddresses: freshRelays))
        XCTAssertEqual(importFailure(replacing(top, at: "events[\(last)].sequence", with: .int(Int64.max))),
                       "events[\(last)].sequence: expected an integer from 1 to 9007199254740991")
        XCTAssertNil(importFailure(replacing(top, at: "events[\(last)].sequence", with: .int(StoredRange.counters.upperBound))))
        // A version 3 archive has its delivery events among its events: a `deliveries` member is refused.
        XCTAssertEqual(importFailure(adding(archive, "deliveries", [])),
                       "deliveries: not a key of a version 3 archive (its delivery events are among its events)")
        // A version 2 archive's delivery event with its cursor past the last event: the log would
        // wait for events that never come. The twin, at the last event, imports.
        let older = try versionTwo(archive)
        let lastSequence = try XCTUnwrap(older.objectValue?["events"]?.arrayValue?.last?.objectValue?["sequence"]?.intValue)
        let lastDelivery = try XCTUnwrap(older.objectValue?["deliveries"]?.arrayValue?.count, "the rich state delivered a notification") - 1
        XCTAssertEqual(importFailure(replacing(older, at: "deliveries[\(lastDelivery)].cursor", with: .int(lastSequence + 1))),
                       "deliveries[\(lastDelivery)].cursor: expected at most the last event's sequence (\(lastSequence)) and at least the previous delivery's cursor")
        XCTAssertNil(importFailure(replacing(older, at: "deliveries[\(lastDelivery)].cursor", with: .int(lastSequence))))
    }

    func testStateImport_OfAVersion2Archive_MergesItsDeliveryEventsIntoTheOneSequence() throws {
        let exported = try richExport()
        let archive = try JSONParser.parse(exported)
        let path = newPath("from-v2")
        try StateArchive.importing(JSONWriter.compact(try versionTwo(archive)), into: path)
        // Exported again: the version 3 archive it came from, every event in its place.
        XCTAssertEqual(try JSONParser.parse(try StateArchive.export(path: path)), archive)
    }

    /// `archive` with the member `key` set to `value`.
    private func adding(_ archive: JSONValue, _ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var object) = archive else { return archive }
        object[key] = value
        return .object(object)
    }

    /// The version 2 archive a version 3 `archive` would have been: its delivery events in a
    /// `deliveries` member of their own sequence, each with the last state event before it as its
    /// cursor, and the state events numbered in their own sequence.
    private func versionTwo(_ archive: JSONValue) throws -> JSONValue {
        guard case .object(var object) = archive, case .array(let events)? = object["events"] else { throw StateArchive.Failure(description: "no events") }
        var state: [JSONValue] = []
        var deliveries: [JSONValue] = []
        for event in events {
            guard case .object(var entry) = event, case .string(let type)? = entry["event"]?.objectValue?["type"] else { continue }
            if type.hasPrefix("notification") {
                deliveries.append(["sequence": .int(Int64(deliveries.count + 1)), "cursor": .int(Int64(state.count)), "event": entry["event"]!])
            } else {
                entry["sequence"] = .int(Int64(state.count + 1))
                state.append(.object(entry))
            }
        }
        object["version"] = 2
        object["events"] = .array(state)
        object["deliveries"] = .array(deliveries)
        return .object(object)
    }

    func testWorld_RefusesAUserOverTheLimit_AndTakesTheLastOneWithin_P7() throws {
        let mock = try AppleIDDomain(configuration: AppleIDMockConfiguration())
        var world = mock.reading { world, _ in world }
        let capacity = world.userCapacity
        var index = 0
        while world.users.count < capacity - 1 {
            world.users["u\(index)"] = UserAccount(user: Scenario.User(id: "u\(index)", email: "u@example.com", givenName: "", familyName: ""))
            index += 1
        }
        let user = Scenario.User(id: "last", email: "last@example.com", givenName: "", familyName: "")
        let added = AddedUser(user: user, teams: world.context.scenario.teams)
        XCTAssertNil(world.refusal(of: .userAdded(added)))
        world.apply(.userAdded(added))
        XCTAssertEqual(world.users.count, capacity)
        let over = AddedUser(user: Scenario.User(id: "over", email: "over@example.com", givenName: "", familyName: ""), teams: world.context.scenario.teams)
        XCTAssertEqual(world.refusal(of: .userAdded(over))?.message, "the mock holds \(capacity) users already, its limit")
    }
}
