@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `Fault` (the Swift API's faults) and `FaultSpec` (the one reader of a fault, for the scenario,
/// `POST /__mock/faults` and `Fault`), pure: every accepted fault with its refused twin, refused
/// with the exact key and message; and `MockControlError`, what the Swift API throws.
final class FaultValidationTests: XCTestCase {
    private static let routes = "/auth/authorize, /auth/token, /auth/revoke, /auth/keys, /auth/usermigrationinfo, /.well-known/openid-configuration"

    /// The fault as `GET /__mock/faults` writes its spec.
    private func text(_ fault: Fault) -> String {
        String(decoding: JSONWriter.compact(.object(fault.spec.json)), as: UTF8.self)
    }

    /// Fails unless `body` throws exactly `MockControlError(field:message:)`.
    private func assertRefused(_ body: @autoclosure () throws -> Fault, _ field: String?, _ message: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        let error = assertThrows(try body(), file: file, line: line)
        XCTAssertEqual(error as? MockControlError, MockControlError(field: field, message: message), file: file, line: line)
    }

    // MARK: - Fault.http

    func testHTTPFault_WritesItsSpec_AndRefusesAPathThatIsNotApples() throws {
        XCTAssertEqual(text(try .http(.post, "/auth/token", .respond(status: 503, headers: [("Retry-After", "2")], body: "down"),
                                      clientID: "com.example.web", grantType: "refresh_token", times: 2)),
                       #"{"target":"http","method":"POST","path":"/auth/token","client_id":"com.example.web","grant_type":"refresh_token","times":2,"action":"respond","status":503,"headers":{"Retry-After":"2"},"body":"down"}"#)
        assertRefused(try .http(.post, "/auth/tokens", .close), "path", "not one of Apple's routes: expected one of \(Self.routes)")
        assertRefused(try .http(.post, "/__mock/reset", .close), "path", "faults act on Apple's routes, never the control API: expected one of \(Self.routes)")
    }

    func testHTTPFault_TakesAMethodTheRouteTakes_AndRefusesAnother() throws {
        XCTAssertEqual(text(try .http(.get, "/auth/keys", .close)), #"{"target":"http","method":"GET","path":"/auth/keys","always":true,"action":"close"}"#)
        assertRefused(try .http(.delete, "/auth/keys", .close), "method", "/auth/keys takes GET, not DELETE")
        assertRefused(try .http(.get, "/auth/token", .close), "method", "/auth/token takes POST, not GET")
    }

    func testHTTPFault_OmitSigningKey_OnAuthKeysOnly() throws {
        XCTAssertEqual(text(try .http(nil, "/auth/keys", .omitSigningKey)), #"{"target":"http","path":"/auth/keys","always":true,"action":"omit_signing_key"}"#)
        assertRefused(try .http(nil, "/auth/token", .omitSigningKey), "action", "omit_signing_key acts on /auth/keys only")
    }

    func testHTTPFault_Delay_TakesOneMillisecondToTenMinutes() throws {
        XCTAssertEqual(text(try .http(nil, "/auth/keys", .delay(.milliseconds(1)))), #"{"target":"http","path":"/auth/keys","always":true,"action":"delay","delay_ms":1}"#)
        XCTAssertEqual(try Fault.http(nil, "/auth/keys", .delay(.seconds(600))).spec.delayMilliseconds, 600_000)
        assertRefused(try .http(nil, "/auth/keys", .delay(.zero)), "delay_ms", "missing: a delay needs delay_ms from 1 to 600000")
        assertRefused(try .http(nil, "/auth/keys", .delay(.milliseconds(600_001))), "delay_ms", "expected an integer from 0 to 600000")
    }

    func testHTTPFault_TruncateAndStall_TakeAByteCount_AndRespondAStatusFrom200To599() throws {
        XCTAssertEqual(text(try .http(nil, "/auth/keys", .truncate(afterBytes: 10))),
                       #"{"target":"http","path":"/auth/keys","always":true,"action":"truncate","after_bytes":10}"#)
        assertRefused(try .http(nil, "/auth/keys", .stall(afterBytes: -1)), "after_bytes", "expected an integer from 0 to 2147483647")
        XCTAssertEqual(try Fault.http(nil, "/auth/keys", .respond(status: 599)).spec.action, .respond(status: 599, headers: [], body: ""))
        assertRefused(try .http(nil, "/auth/keys", .respond(status: 199)), "status", "expected an integer from 200 to 599")
        assertRefused(try .http(nil, "/auth/keys", .respond(status: 200, headers: [("Bad Name", "x")])), "headers",
                      "cannot be sent: \(try XCTUnwrap(Self.headerDefect("Bad Name")))")
    }

    /// What the serializer says of a response with a header named `name`.
    private static func headerDefect(_ name: String) -> String? {
        var response = HTTPResponse(status: .ok)
        response.headers.add(name, "x")
        return HTTPResponseSerializer.defect(of: response)
    }

    // MARK: - Firing

    func testFiring_TakesOneOfTimesProbabilityOrAlways_InRange() throws {
        XCTAssertEqual(try Fault.http(nil, "/auth/keys", .close, times: 1).spec.firing, .times(1))
        XCTAssertEqual(try Fault.http(nil, "/auth/keys", .close, times: FaultSpec.maxTimes).spec.firing, .times(1_000_000))
        assertRefused(try .http(nil, "/auth/keys", .close, times: 0), "times", "expected an integer from 1 to 1000000")
        XCTAssertEqual(try Fault.http(nil, "/auth/keys", .close, probability: 1).spec.firing, .probability(1))
        assertRefused(try .http(nil, "/auth/keys", .close, probability: 1.5), "probability", "expected a number from 0 to 1, found 1.5")
        assertRefused(try .http(nil, "/auth/keys", .close, times: 1, probability: 0.5), "probability", "give one of times, always or probability")
        XCTAssertEqual(try Fault.http(nil, "/auth/keys", .close, duration: .seconds(1)).spec.forSeconds, 1)
        assertRefused(try .http(nil, "/auth/keys", .close, duration: .zero), "for_seconds", "expected an integer from 1 to 31536000")
    }

    // MARK: - Fault.notifications

    func testNotificationFault_WritesItsSpec_AndRefusesAnHTTPAction() throws {
        XCTAssertEqual(text(try .notifications(type: .consentRevoked, clientID: "com.example.app", .delay(.seconds(2)), times: 3)),
                       #"{"target":"notifications","type":"consent-revoked","client_id":"com.example.app","times":3,"action":"delay","delay_ms":2000}"#)
        XCTAssertEqual(text(try .notifications(.drop)), #"{"target":"notifications","always":true,"action":"drop"}"#)
        assertRefused(try Fault(json: #"{"target":"notifications","action":"close"}"#), "action",
                      "expected one of drop, duplicate, delay, reorder, once for target notifications, found \"close\"")
        assertRefused(try Fault(json: #"{"target":"notifications","action":"drop","path":"/auth/keys"}"#), "path", "not a key of a notifications fault")
        assertRefused(try Fault(json: #"{"target":"notifications","action":"drop","type":"account-gone"}"#), "type",
                      "expected one of consent-revoked, account-delete, email-disabled, email-enabled")
    }

    // MARK: - Fault(json:)

    func testFaultJSON_ReadsWhatTheControlAPITakes_AndRefusesWhatItRefuses() throws {
        XCTAssertEqual(text(try Fault(json: #"{"path":"/auth/keys","action":"respond","status":429,"times":1}"#)),
                       #"{"target":"http","path":"/auth/keys","times":1,"action":"respond","status":429,"headers":{},"body":""}"#)
        assertRefused(try Fault(json: "[]"), nil, "expected an object")
        assertRefused(try Fault(json: #"{"path":"/auth/keys"}"#), "action",
                      "missing required key (expected one of: respond, delay, close, reset, truncate, stall, omit_signing_key)")
        assertRefused(try Fault(json: #"{"path":"/auth/keys","action":"close","colour":"red"}"#), "colour",
                      "unknown key (expected one of: \(FaultSpec.keys.joined(separator: ", ")))")
        assertRefused(try Fault(json: #"{"target":"smtp","action":"close"}"#), "target", #"expected "http" or "notifications", found "smtp""#)
        let notJSON = assertThrows(try Fault(json: "{path")) as? MockControlError
        XCTAssertNil(notJSON?.field)
        XCTAssertEqual(notJSON?.message.hasPrefix("not JSON: "), true, notJSON?.message ?? "")
    }

    func testFaultSpec_WrittenAndReadBack_IsTheSameFault() throws {
        for fault in [try Fault.http(.post, "/auth/token", .respond(status: 503, headers: [("A", "1"), ("B", "2")], body: "x"), times: 4),
                      try Fault.http(nil, "/auth/keys", .stall(afterBytes: 7), probability: 0.25, duration: .seconds(60)),
                      try Fault.notifications(type: .emailEnabled, .reorder)] {
            XCTAssertEqual(try FaultSpec(json: .object(fault.spec.json)), fault.spec)
        }
        // The twin: a spec changed in one key reads back as another fault.
        var changed = try Fault.http(nil, "/auth/keys", .close, times: 4).spec.json
        changed["times"] = 5
        XCTAssertNotEqual(try FaultSpec(json: .object(changed)), try Fault.http(nil, "/auth/keys", .close, times: 4).spec)
    }

    // MARK: - MockControlError

    func testMockControlError_DescribesItselfWithItsField_OrWithout() {
        XCTAssertEqual(MockControlError(field: "user", message: "no user \"zed\"").description, #"user: no user "zed""#)
        XCTAssertEqual(MockControlError(field: nil, message: "at most 256 faults at once").description, "at most 256 faults at once")
        XCTAssertNotEqual(MockControlError(field: "user", message: "x"), MockControlError(field: nil, message: "x"))
    }

    func testMockControlError_FromASignInRefusal_KeepsItsFieldAndMessage() {
        XCTAssertEqual(MockControlError(AppleIDDomain.SignInRefusal.invalid(field: "client_id", message: "no client \"x\" in the scenario")),
                       MockControlError(field: "client_id", message: "no client \"x\" in the scenario"))
        XCTAssertEqual(MockControlError(AppleIDDomain.SignInRefusal.full(CapacityError(message: "the mock holds 100000 codes already"))),
                       MockControlError(field: nil, message: "the mock holds 100000 codes already"))
        XCTAssertEqual(MockControlError(AppleIDDomain.SignInRefusal.signing("no signing key is published")),
                       MockControlError(field: nil, message: "the token could not be signed: no signing key is published"))
    }

    func testMockControls_ThrowMockControlError_NamingTheInput() async throws {
        let mock = try inMemoryMock { $0.scenario.clock = .init(start: frozenNow, frozen: true) }
        addTeardownBlock { await mock.stop() }
        let unknownUser = await assertThrowsAsync { try await mock.signInNative(user: "zed", clientID: "com.example.app") }
        XCTAssertEqual(unknownUser as? MockControlError, MockControlError(field: "user", message: "no user \"zed\" in the scenario"))
        let servicesID = await assertThrowsAsync { try await mock.signInNative(user: "alice", clientID: "com.example.web") }
        XCTAssertEqual(servicesID as? MockControlError,
                       MockControlError(field: "client_id", message: "native sign-in needs an App ID (bundle id); \"com.example.web\" is a Services ID"))
        XCTAssertEqual(assertThrows(try mock.clientSecret(clientID: "com.example.web", lifetime: .zero)) as? MockControlError,
                       MockControlError(field: "lifetime", message: "expected 1 second to 6 months (15777000 s), Apple's limit"))
        // Past what tokens can carry: the control API's own words, through either door.
        let farOff = await assertThrowsAsync { try await mock.advanceClock(by: .seconds(90 * 365 * 86_400)) }
        let limit = "the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z"
        XCTAssertEqual(farOff as? MockControlError, MockControlError(field: "advance", message: limit))
        let overHTTP = await mock.postJSON("/__mock/clock", #"{"advance":\#(90 * 365 * 86_400)}"#)
        XCTAssertEqual(overHTTP.status.code, 400)
        XCTAssertEqual(overHTTP.text, #"{"error":"\#(limit)","field":"advance"}"#)
        let minutes = await assertThrowsAsync { try await mock.installIncident(.tokenEndpointOutage, minutes: 0) }
        XCTAssertEqual(minutes as? MockControlError, MockControlError(field: "minutes", message: "expected 1 to \(FaultIncident.maxMinutes)"))
        // The twins: the same controls with good input answer.
        _ = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        XCTAssertFalse(try mock.clientSecret(clientID: "com.example.web", lifetime: .seconds(1)).isEmpty)
        try await mock.advanceClock(by: .seconds(60))
        let installed = try await mock.installIncident(.tokenEndpointOutage, minutes: 1)
        XCTAssertEqual(installed, ["f1"])
    }
}
