@testable import AppleIDMock
import Foundation
import JOSE
import XCTest

/// The state file's JSON codec: every event, notification record, clock and random position
/// goes through the file's text and comes back equal; every tampered twin is refused with the
/// exact path and message (house style rule 13).
final class StoredStateCodecTests: XCTestCase {
    // MARK: - Factories

    /// The first built-in signing key (`Keys/signing/W2ek7HdPaL.pem`).
    private static let signingKey: KeyRing.SigningKey = {
        let (keyID, pem) = BuiltInKeys.signing[0]
        return KeyRing.SigningKey(keyID: keyID, privateKey: try! RSAPrivateKey(pem: pem))
    }()

    /// A consent grant with every field set.
    private func consentGrant(consentID: UInt32 = 4_000_000_000, relayAddress: String? = "k2x9q7m3ab@private.icloud.com") -> ConsentGrant {
        ConsentGrant(userID: "alice", teamID: "MOCKTEAM01", groupID: "com.example.app", consentID: consentID, scopes: ["name", "email"],
                     hideEmail: true, relayAddress: relayAddress, at: 1_700_000_123)
    }

    /// An authorization grant, native with a defect unless told otherwise.
    private func authorizationGrant(flow: AuthorizationGrant.Flow = .native, optionals: Bool = true) -> AuthorizationGrant {
        AuthorizationGrant(clientID: "com.example.web", redirectURI: optionals ? webRedirect : nil, consentID: 9, teamID: "MOCKTEAM01", userID: "bob",
                           nonce: optionals ? "nonce-1" : nil, codeChallenge: optionals ? "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" : nil,
                           codeChallengeMethod: optionals ? "S256" : nil, authTime: 1_700_000_000, expiresAt: 1_700_000_300, flow: flow,
                           isFirstAuthorization: true, defect: optionals ? .hs256PublicKey : nil)
    }

    /// A runtime user with every field away from its default, in the built-in scenario's teams.
    private func addedUser() -> AddedUser {
        AddedUser(user: Scenario.User(id: "zoe.q-1", email: "zoe@example.com", givenName: "Zoë", familyName: "Q\"uote\n", hideEmail: true,
                                      realUserStatus: 1, relayDomain: .privateRelayAppleID),
                  teams: Scenario.default.teams)
    }

    /// An account event with every optional set.
    private func accountEventRecord() -> AccountEventRecord {
        AccountEventRecord(type: .emailDisabled, userID: "alice", teamID: "MOCKTEAM01", groupID: "com.example.app",
                           subject: "001234.0123456789abcdef0123456789abcdef.0001", eventTime: 1_700_000_000_123, at: 1_700_000_000,
                           email: "k2x9q7m3ab@privaterelay.appleid.com", notificationID: "jti-7", signingKeyID: "W2ek7HdPaL", timelineIndex: 2)
    }

    /// One event of every case (two where an optional matters), with values away from defaults.
    private func sampleEvents() -> [DomainEvent] {
        var noOptionals = accountEventRecord()
        noOptionals.type = .accountDelete
        noOptionals.email = nil
        noOptionals.signingKeyID = nil
        noOptionals.timelineIndex = nil
        return [
            .consentGranted(consentGrant()),
            .consentGranted(consentGrant(consentID: 0, relayAddress: nil)),
            .consentRevoked(userID: "alice", teamID: "MOCKTEAM01", groupID: "com.example.app", consentID: UInt32.max, by: .byUser),
            .consentRevoked(userID: "bob", teamID: "MOCKTEAM01", groupID: "com.example.app", consentID: 3, by: .byApp),
            .codeIssued(code: "c0123456789abcdef0123456789abcdef.0.mock.abcdefghijklmnopqrstuv", grant: authorizationGrant()),
            .codeIssued(code: "c1", grant: authorizationGrant(flow: .web, optionals: false)),
            .codeRedeemed(code: "c1", clientID: "com.example.web", userID: "bob", consentID: 9),
            .codesExpired(at: 0, count: 3),
            .tokensIssued(grantType: "client_credentials", clientID: "com.example.web", userID: nil, consentID: 0),
            .tokensIssued(grantType: "refresh_token", clientID: "com.example.app", userID: "alice", consentID: 12),
            .refreshCounted(RefreshCount(token: .init(consentID: 12, clientID: "com.example.app", issuedAt: 1_700_000_000), day: 19_675, count: 3)),
            .keyPublished(key: Self.signingKey, at: 1_700_000_000, step: 0),
            .keyPublished(key: Self.signingKey, at: 1_700_000_001, step: nil),
            .keyActivated(kid: "W2ek7HdPaL", at: 1_700_000_002),
            .keyRetired(kid: "Ymq4vB9xTz", at: StoredRange.seconds.lowerBound, step: StoredRange.counts.upperBound),
            .keyScheduleAdvanced(at: StoredRange.seconds.upperBound),
            .clockChanged(clock: MockClock(offset: -123.456, frozenAt: 1_700_000_000.25), now: 1_700_000_000),
            .userAdded(addedUser()),
            .transferStarted(TransferRecord(userID: "alice", fromTeam: "MOCKTEAM01", toTeam: "MOCKTEAM02",
                                            transferSubject: "001234.fedcba9876543210fedcba9876543210.0002", createdAt: 1_700_000_050)),
            .accountDeleted(userID: "bob"),
            .relayForwardingChanged(userID: "alice", teamID: "MOCKTEAM01", enabled: false),
            .passwordChanged(userID: "alice", renewals: [ConsentRenewal(teamID: "MOCKTEAM01", groupID: "com.example.app", from: 3, to: 9)]),
            .accountEvent(accountEventRecord()),
            .accountEvent(noOptionals),
            .timelineEventRefused(index: 3, message: "no user \"carol\"\n\u{1}"),
            .reset(ResetRecord(clock: MockClock(offset: 0.1, frozenAt: nil), now: 1_700_000_100, secret: Array(200..<232), firstConsentID: 42)),
            .faultFired(FaultFiring(faultID: "f2", action: "duplicate", target: "notification consent-revoked")),
            .faultsInstalled(installedFaults()),
            .faultsInstalled([]),
            .faultsRemoved(ids: ["f1", "f12"]),
            .faultsRemoved(ids: []),
            .delivery(.attempted(id: 3, attempt: .init(at: 1_700_000_001.5, status: 503, error: nil), jwt: "h.p.s", outcome: .pending,
                                 dueAt: 1_700_000_031.5)),
            .delivery(.attempted(id: 4, attempt: .init(at: 0, status: nil, error: "connection refused"), jwt: nil, outcome: .failed, dueAt: nil)),
            .delivery(.cleared(through: 9, cancelPending: true)),
            .delivery(.imported(settledRecord())),
        ]
    }

    /// Installed faults with every kind of state: a `times` fault partly spent, a `for_seconds`
    /// one, one with a probability, headers and a body.
    private func installedFaults() -> [InstalledFault] {
        let specs: [JSONValue] = [
            ["path": "/auth/token", "method": "POST", "client_id": "com.example.web", "grant_type": "authorization_code", "action": "respond",
             "status": 503, "headers": ["Retry-After": "2"], "body": "{\"error\":\"x\"}", "times": 3],
            ["target": "notifications", "type": "consent-revoked", "action": "delay", "delay_ms": 1500, "for_seconds": 600],
            ["path": "/auth/keys", "action": "omit_signing_key", "probability": 0.25],
        ]
        return specs.enumerated().map { index, json in
            let spec = try! FaultSpec(json: json)
            return InstalledFault(id: "f\(index + 1)", spec: spec, remaining: index == 0 ? 2 : nil, fired: index == 0 ? 1 : 7,
                                  until: index == 1 ? 1_700_000_600 : nil)
        }
    }

    /// A pending notification as the deliverer queues it: not yet signed, its attempt in flight.
    private func pendingRecord() -> NotificationRecord {
        let payload = JSONWriter.compact(["iss": "https://appleid.apple.com", "aud": "com.example.app", "iat": 1_700_000_000, "jti": "jti-7",
                                          "events": "{\"type\":\"consent-revoked\",\"sub\":\"001234.x.0001\"}"])
        let notification = PendingNotification(payload: payload, type: "consent-revoked", groupID: "com.example.app", url: "http://127.0.0.1:9/apple",
                                               userID: "alice", sequence: 17, keyID: "W2ek7HdPaL")
        return NotificationRecord(id: 3, notification: notification, outcome: .pending, dueAt: .infinity)
    }

    /// A record delivered and settled, as an older file's log held it.
    private func settledRecord() -> NotificationRecord {
        var record = pendingRecord()
        record.signed("h.p.s")
        record.attempts = [.init(at: 1_700_000_001, status: 200, error: nil)]
        record.outcome = .delivered
        record.dueAt = 1_700_000_001
        return record
    }

    // MARK: - Helpers

    /// `value` stored, written as pretty text, parsed and read back at `path`.
    private func roundTrip<T: StoredCodable>(_ value: T, path: String = "", file: StaticString = #filePath, line: UInt = #line) throws -> T {
        let stored = value.stored
        let parsed = try JSONParser.parse(JSONWriter.pretty(stored))
        XCTAssertEqual(parsed, stored, "the text reads back to the same JSON", file: file, line: line)
        return try T(stored: parsed, path: path)
    }

    /// Fails unless reading `value` as `T` at `path` throws exactly `expectedPath: message`.
    private func assertRefused<T: StoredCodable>(_ type: T.Type, _ value: JSONValue, path: String = "", _ expectedPath: String, _ message: String,
                                                 file: StaticString = #filePath, line: UInt = #line) {
        let error = assertThrows(try T(stored: value, path: path), file: file, line: line)
        XCTAssertEqual(error as? StoredStateError, StoredStateError(path: expectedPath, message: message), file: file, line: line)
    }

    /// `value` with the member at `keys` replaced by `replacement` (removed when nil).
    private func tampered(_ value: JSONValue, _ keys: [String], _ replacement: JSONValue?) -> JSONValue {
        guard let key = keys.first, case .object(var object) = value else { return replacement ?? .null }
        object[key] = keys.count == 1 ? replacement : tampered(object[key] ?? .null, Array(keys.dropFirst()), replacement)
        return .object(object)
    }

    /// Fails unless the two records agree in every field, the private ones included.
    private func assertSameRecord(_ actual: NotificationRecord, _ expected: NotificationRecord, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.id, expected.id, file: file, line: line)
        XCTAssertEqual(actual.type, expected.type, file: file, line: line)
        XCTAssertEqual(actual.userID, expected.userID, file: file, line: line)
        XCTAssertEqual(actual.sequence, expected.sequence, file: file, line: line)
        XCTAssertEqual(actual.url, expected.url, file: file, line: line)
        XCTAssertEqual(actual.unsigned, expected.unsigned, file: file, line: line)
        XCTAssertEqual(actual.keyID, expected.keyID, file: file, line: line)
        XCTAssertEqual(actual.jwt, expected.jwt, file: file, line: line)
        XCTAssertEqual(actual.attempts, expected.attempts, file: file, line: line)
        XCTAssertEqual(actual.outcome, expected.outcome, file: file, line: line)
        XCTAssertEqual(actual.dueAt.bitPattern, expected.dueAt.bitPattern, file: file, line: line)
        XCTAssertEqual(actual.fault, expected.fault, file: file, line: line)
    }

    // MARK: - Round trips

    func testDomainEvent_RoundTripsExactly_ForEveryCase() throws {
        let events = sampleEvents()
        // The samples cover every kind the compiler knows of: a new case without a sample fails here.
        XCTAssertEqual(Set(events.map(\.kind)), Set(DomainEvent.Kind.allCases), "a sample of every kind")
        for (index, event) in events.enumerated() {
            XCTAssertEqual(try roundTrip(event, path: "events[\(index)]"), event, event.name)
            XCTAssertEqual(DomainEvent.Kind(rawValue: event.name), event.kind, "the stored type names the kind")
        }
        XCTAssertEqual(DomainEvent.names, DomainEvent.Kind.allCases.map(\.rawValue))
        XCTAssertEqual(Set(DomainEvent.names).count, DomainEvent.Kind.allCases.count, "no two kinds share a name")
    }

    func testCompaction_StatementsNameEveryKindThatGoes_AndNoKindThatStays() {
        let first = StateFile.compactionStatements[0]
        for kind in DomainEvent.Kind.allCases {
            switch kind.compaction {
            case .inert, .inertUnlessCounting: XCTAssertTrue(first.contains("'\(kind.rawValue)'"), kind.rawValue)
            case .kept, .code: XCTAssertFalse(first.contains("'\(kind.rawValue)'"), kind.rawValue)
            }
        }
        XCTAssertEqual(first, "DELETE FROM events WHERE sequence > ?1 AND sequence <= ?2 AND (type IN ('tokens-issued') OR (type IN ('refresh-counted', 'fault-fired') AND code IS NULL))")
        XCTAssertEqual(StateFile.typeList(.code), "'code-issued', 'code-redeemed'")
    }

    func testDomainEvent_StoresTypeFirstAndFieldsInSnakeCase() throws {
        let event = DomainEvent.consentRevoked(userID: "alice", teamID: "MOCKTEAM01", groupID: "com.example.app", consentID: 7, by: .byUser)
        XCTAssertEqual(String(decoding: JSONWriter.compact(event.stored), as: UTF8.self),
                       #"{"type":"consent-revoked","user_id":"alice","team_id":"MOCKTEAM01","group_id":"com.example.app","consent_id":7,"by":"user"}"#)
    }

    func testSigningKey_RoundTripsWithItsPrivateKey() throws {
        let restored = try roundTrip(Self.signingKey)
        XCTAssertEqual(restored, Self.signingKey)
        XCTAssertEqual(try restored.privateKey.pkcs8PEM, try Self.signingKey.privateKey.pkcs8PEM)
        XCTAssertEqual(Self.signingKey.stored.objectValue?["private_key_pem"]?.stringValue, try Self.signingKey.privateKey.pkcs8PEM)
        // What the restored key signs, the original's public key verifies.
        let jws = try CompactJWS.signRS256(payload: Array("{}".utf8), kid: restored.keyID, key: restored.privateKey)
        XCTAssertTrue(jws.verifyRS256(with: Self.signingKey.privateKey.publicKey))
    }

    func testAddedUser_RoundTripsItsIdentifiers() throws {
        let added = addedUser()
        let restored = try roundTrip(added)
        XCTAssertEqual(restored, added)
        XCTAssertEqual(restored.subjects, added.subjects)
        XCTAssertEqual(restored.relayAddresses, added.relayAddresses)
        XCTAssertEqual(added.stored.objectValue?["user"], added.user.json, "the user as a scenario file writes it")
    }

    func testMockClock_RoundTrips_WhenFrozenAndWhenRunning() throws {
        let frozen = MockClock(Scenario.ClockSettings(start: frozenNow, frozen: true), real: 1234.5)
        var running = MockClock(Scenario.ClockSettings(start: frozenNow, frozen: false), real: 1_699_999_000.123)
        XCTAssertEqual(try roundTrip(frozen), frozen)
        XCTAssertEqual(try roundTrip(running), running)
        running.setFrozen(true, real: 1_699_999_100.7)
        XCTAssertEqual(try roundTrip(running), running, "frozen with an offset kept")
        XCTAssertEqual(running.stored, ["offset": .double(running.offset), "frozen_at": .double(try XCTUnwrap(running.frozenAt))])
    }

    func testMockClock_RoundTripsEveryDoubleBitForBit() throws {
        for offset in [0.1, -0.0, 1e-7, Double.leastNonzeroMagnitude, StoredRange.offsets.lowerBound, 1_700_000_000.123456789, 1.0 / 3, 2.0] {
            let restored = try roundTrip(MockClock(offset: offset, frozenAt: 4_000_000_000.0000005))
            XCTAssertEqual(restored.offset.bitPattern, offset.bitPattern, "\(offset)")
            XCTAssertEqual(restored.frozenAt?.bitPattern, 4_000_000_000.0000005.bitPattern)
        }
    }

    func testNotificationRecord_RoundTrips_WhenPendingInFlight() throws {
        let record = pendingRecord()
        XCTAssertNotNil(record.unsigned)
        let restored = try roundTrip(record, path: "notifications[0]")
        assertSameRecord(restored, record)
        XCTAssertEqual(record.stored.objectValue?["due_at"], "infinity")
        XCTAssertEqual(restored.claims, record.claims)
    }

    func testNotificationRecord_RoundTrips_WithAttemptsAndAFault() throws {
        var record = pendingRecord()
        record.attempts = [NotificationRecord.Attempt(at: 1_700_000_000.125, status: 503, error: nil),
                           NotificationRecord.Attempt(at: 1_700_000_002.1, status: nil, error: "connection refused")]
        record.dueAt = 1_700_000_006.3
        record.fault = "f2 duplicate"
        assertSameRecord(try roundTrip(record), record)
    }

    func testNotificationRecord_RoundTrips_WhenSigned() throws {
        var record = pendingRecord()
        let payload = try XCTUnwrap(record.unsigned)
        record.signed(try CompactJWS.signRS256(payload: payload, kid: Self.signingKey.keyID, key: Self.signingKey.privateKey).compact)
        record.attempts = [NotificationRecord.Attempt(at: 1_700_000_000, status: 200, error: nil)]
        record.outcome = .delivered
        record.dueAt = 0
        XCTAssertNil(record.unsigned)
        let restored = try roundTrip(record)
        assertSameRecord(restored, record)
        XCTAssertEqual(restored.claims, record.claims)
    }

    func testRandomPosition_RestoresTheSameStream_AfterFiveBytes() throws {
        var source = RandomSource.seeded(42)
        _ = source.bytes(5)
        let position = try XCTUnwrap(source.streamPosition)
        XCTAssertEqual(position.nextBlock, 1)
        XCTAssertEqual(position.pending.count, 27)
        let restoredPosition = try roundTrip(position, path: "random")
        XCTAssertEqual(restoredPosition, position)
        var restored = try XCTUnwrap(RandomSource(position: restoredPosition))
        XCTAssertEqual(restored.bytes(100), source.bytes(100))
        XCTAssertNil(RandomSource(bytes: { Array(repeating: 0, count: $0) }).streamPosition, "only a stream has a position")
    }

    func testSeededRandomPosition_IsRefused_WhenMalformed() {
        let key = [UInt8](repeating: 7, count: 32)
        XCTAssertNotNil(SeededRandom(position: .init(key: key, nextBlock: 0, pending: [])))
        XCTAssertNil(SeededRandom(position: .init(key: Array(key.dropLast()), nextBlock: 0, pending: [])))
        XCTAssertNil(SeededRandom(position: .init(key: key, nextBlock: 1, pending: Array(repeating: 0, count: 33))))
        XCTAssertNil(SeededRandom(position: .init(key: key, nextBlock: UInt64.max, pending: [])))
    }

    // MARK: - Tampered twins

    func testDomainEvent_IsRefused_WhenTampered() {
        let issued = DomainEvent.codeIssued(code: "c1", grant: authorizationGrant()).stored
        assertRefused(DomainEvent.self, tampered(issued, ["grant", "expires_at"], "soon"), path: "events[3]",
                      "events[3].grant.expires_at", "expected an integer from 0 to 4326589695")
        assertRefused(DomainEvent.self, tampered(issued, ["grant", "expires_at"], nil), "grant.expires_at", "missing required key")
        assertRefused(DomainEvent.self, tampered(issued, ["grant", "consent_id"], 4_294_967_296),
                      "grant.consent_id", "expected an integer from 0 to 4294967295")
        assertRefused(DomainEvent.self, tampered(issued, ["grant", "consent_id"], -1), "grant.consent_id", "expected an integer from 0 to 4294967295")
        assertRefused(DomainEvent.self, tampered(issued, ["grant", "flow"], "desktop"), "grant.flow", #"expected "web" or "native""#)
        assertRefused(DomainEvent.self, tampered(issued, ["grant", "defect"], "typo"), "grant.defect",
                      "expected " + TokenDefect.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ") + " or null")
        assertRefused(DomainEvent.self, tampered(issued, ["grant", "nonse"], "n"), "grant.nonse", "unknown key")
        assertRefused(DomainEvent.self, tampered(issued, ["type"], "code-issued2"), path: "events[0]", "events[0].type",
                      "unknown event type \"code-issued2\" (expected one of: \(DomainEvent.names.joined(separator: ", ")))")
        assertRefused(DomainEvent.self, tampered(issued, ["type"], 3), "type", "expected a string")
        assertRefused(DomainEvent.self, ["type", "reset"], "$", "expected an object")

        let revoked = DomainEvent.consentRevoked(userID: "a", teamID: "T", groupID: "g", consentID: 1, by: .byApp).stored
        assertRefused(DomainEvent.self, tampered(revoked, ["by"], nil), path: "events[1]", "events[1].by", "missing required key")
        assertRefused(DomainEvent.self, tampered(revoked, ["by"], "admin"), "by", #"expected "app" or "user""#)

        assertRefused(DomainEvent.self, tampered(DomainEvent.codesExpired(at: 1, count: 2).stored, ["count"], -1), "count", "expected an integer from 0 to 9007199254740991")
        assertRefused(DomainEvent.self, tampered(DomainEvent.keyActivated(kid: "W2ek7HdPaL", at: 1).stored, ["kid"], "has space"),
                      "kid", ScenarioRules.keyIDExpectation)
        assertRefused(DomainEvent.self, tampered(DomainEvent.consentGranted(consentGrant()).stored, ["grant", "scopes"], ["email", "name", "email"]),
                      "grant.scopes[2]", #"duplicate "email""#)
        assertRefused(DomainEvent.self, tampered(DomainEvent.accountEvent(accountEventRecord()).stored, ["account_event", "type"], "account-deleted"),
                      "account_event.type", #"expected "consent-revoked" or "account-delete" or "email-disabled" or "email-enabled""#)
        assertRefused(DomainEvent.self, tampered(DomainEvent.accountEvent(accountEventRecord()).stored, ["account_event", "timeline_index"], -1),
                      "account_event.timeline_index", "expected an integer from 0 to 9007199254740991 or null")
    }

    func testSigningKey_IsRefused_WhenThePEMIsBad() throws {
        let published = DomainEvent.keyPublished(key: Self.signingKey, at: 1, step: nil).stored
        // OpenSSL's own words for unreadable DER vary with its version: the path is exact, the message its start.
        let garbage = tampered(published, ["key", "private_key_pem"], "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        let error = assertThrows(try DomainEvent(stored: garbage, path: "events[2]")) as? StoredStateError
        XCTAssertEqual(error?.path, "events[2].key.private_key_pem")
        XCTAssertTrue(error?.message.hasPrefix("expected an RSA private key in PEM (invalid key: ") == true, error?.message ?? "")
        let ecKey = try String(contentsOfFile: repositoryRoot + "/Keys/AuthKey_MOCKKEY001.p8", encoding: .utf8)
        assertRefused(DomainEvent.self, tampered(published, ["key", "private_key_pem"], .string(ecKey)),
                      "key.private_key_pem", "expected an RSA private key in PEM (invalid key: not an RSA private key)")
        assertRefused(DomainEvent.self, tampered(published, ["key", "private_key_pem"], nil), "key.private_key_pem", "missing required key")
    }

    func testAddedUser_IsRefused_WhenTampered() {
        let added = DomainEvent.userAdded(addedUser()).stored
        assertRefused(DomainEvent.self, tampered(added, ["added_user", "relay_addresses"], ["abcdefghij@private.icloud.com", "klmnopqrst@private.icloud.com"]),
                      "added_user.relay_addresses", "expected 1 addresses, one per subject")
        assertRefused(DomainEvent.self, tampered(added, ["added_user", "user", "id"], "has space"),
                      "added_user.user.id", "expected 1 to 64 letters, digits, '.', '-' or '_'")
        assertRefused(DomainEvent.self, tampered(added, ["added_user", "user", "real_user_status"], 3),
                      "added_user.user.real_user_status", "expected an integer from 0 to 2")
        assertRefused(DomainEvent.self, tampered(added, ["added_user", "user", "relay_domain"], "apple.com"),
                      "added_user.user.relay_domain", #"expected "private.icloud.com" or "privaterelay.appleid.com" or "icloud.com""#)
        assertRefused(DomainEvent.self, tampered(added, ["added_user", "subjects"], ["alice"]),
                      "added_user.subjects[0]", "expected a sub (NNNNNN.<32 hex>.NNNN)")
    }

    func testResetRecord_IsRefused_WhenTheSecretOrClockIsTampered() {
        let reset = DomainEvent.reset(ResetRecord(clock: MockClock(offset: 0, frozenAt: nil), now: 1, secret: Array(0..<32), firstConsentID: 1)).stored
        assertRefused(DomainEvent.self, tampered(reset, ["reset", "secret"], .string(Base64URL.encode(Array(0..<31)))),
                      "reset.secret", "expected 32 bytes as unpadded base64url")
        assertRefused(DomainEvent.self, tampered(reset, ["reset", "secret"], "not base64url!"), "reset.secret", "expected 32 bytes as unpadded base64url")
        assertRefused(DomainEvent.self, tampered(reset, ["reset", "clock", "offset"], "infinity"), "reset.clock.offset", "expected a number from -4326589695 to 4326589695")
        assertRefused(DomainEvent.self, tampered(reset, ["reset", "clock", "frozen_at"], 1e12),
                      "reset.clock.frozen_at", "expected a number from 0 to \(MockClock.representable.upperBound) or null")
        assertRefused(DomainEvent.self, tampered(reset, ["reset", "first_consent_id"], 1.5), "reset.first_consent_id", "expected an integer from 0 to 4294967295")
    }

    func testNotificationRecord_IsRefused_WhenTampered() {
        let record = pendingRecord().stored
        assertRefused(NotificationRecord.self, tampered(record, ["id"], -1), path: "notifications[4]",
                      "notifications[4].id", "expected an integer from 1 to 9007199254740991")
        assertRefused(NotificationRecord.self, tampered(record, ["sequence"], "18446744073709551616"),
                      "sequence", "expected an integer from 1 to 9007199254740991")
        assertRefused(NotificationRecord.self, tampered(record, ["due_at"], .null), "due_at", #"expected a number from 0 to 4326589695 or "infinity""#)
        assertRefused(NotificationRecord.self, tampered(record, ["due_at"], "-infinity"), "due_at", #"expected a number from 0 to 4326589695 or "infinity""#)
        assertRefused(NotificationRecord.self, tampered(record, ["outcome"], "lost"),
                      "outcome", #"expected "pending" or "delivered" or "failed" or "no_url" or "dropped" or "abandoned""#)
        assertRefused(NotificationRecord.self, tampered(record, ["attempts"], [["at": 1, "status": 1000]]),
                      "attempts[0].status", "expected an integer from 0 to 999 or null")
        assertRefused(NotificationRecord.self, tampered(record, ["attempts"], [["at": "now"]]), "attempts[0].at", "expected a number from 0 to 4326589695")
        assertRefused(NotificationRecord.self, tampered(record, ["unsigned"], 5), "unsigned", #"expected a string, an object {"base64url"} or null"#)
        assertRefused(NotificationRecord.self, tampered(record, ["url"], false), "url", "expected a string or null")
    }

    func testNotificationRecord_RoundTripsItsLargestCounters_AndBytesThatAreNotUTF8() throws {
        let largest = UInt64(StoredRange.counters.upperBound)
        let record = NotificationRecord(id: largest, type: "email-enabled", userID: "bob", sequence: largest, url: nil,
                                        unsigned: [0xFF, 0x00], keyID: nil, jwt: nil, attempts: [], outcome: .noURL, dueAt: 0, fault: nil)
        XCTAssertEqual(record.stored.objectValue?["id"], .int(StoredRange.counters.upperBound))
        XCTAssertEqual(record.stored.objectValue?["unsigned"], ["base64url": "_wA"], "bytes that are not UTF-8 stay exact")
        assertSameRecord(try roundTrip(record), record)
        // The twin: one more is beyond what the mock counts to (probe P1/P7: no counter near a maximum).
        assertRefused(NotificationRecord.self, tampered(record.stored, ["id"], .int(StoredRange.counters.upperBound + 1)),
                      "id", "expected an integer from 1 to 9007199254740991")
    }

    func testRandomPosition_IsRefused_WhenTampered() throws {
        var source = RandomSource.seeded(7)
        _ = source.bytes(5)
        let position = try XCTUnwrap(source.streamPosition).stored
        assertRefused(SeededRandom.Position.self, tampered(position, ["key"], .string(Base64URL.encode(Array(repeating: 1, count: 31)))), path: "random",
                      "random.key", "expected 32 bytes as unpadded base64url")
        assertRefused(SeededRandom.Position.self, tampered(position, ["pending"], .string(Base64URL.encode(Array(repeating: 1, count: 33)))),
                      "pending", "expected 0 to 32 bytes as unpadded base64url")
        assertRefused(SeededRandom.Position.self, tampered(position, ["next_block"], -1), "next_block", "expected an integer from 0 to 9007199254740991")
        assertRefused(SeededRandom.Position.self, tampered(position, ["next_block"], "1"), "next_block", "expected an integer from 0 to 9007199254740991")
        assertRefused(SeededRandom.Position.self, tampered(position, ["seed"], 7), "seed", "unknown key")
    }

    func testStoredStateError_DescribesPathAndMessage() {
        XCTAssertEqual(StoredStateError(path: "grant.expires_at", message: "expected an integer").description, "grant.expires_at: expected an integer")
    }
}
