@testable import AppleIDMock
import JOSE
import XCTest

/// Each compatibility knob is declared once (`Compatibility.knobs`): reading, writing and the
/// list of known keys all come from that table (issue 20 item 8).
final class CompatibilityKnobsTests: XCTestCase {
    func testEveryField_HasExactlyOneKnob() {
        let fields = Mirror(reflecting: Compatibility()).children.count
        XCTAssertEqual(Compatibility.knobs.count, fields, "a Compatibility field without its line in Compatibility.knobs, or the reverse")
        XCTAssertEqual(Set(Compatibility.knobs.map(\.name)).count, Compatibility.knobs.count, "a knob name twice")
    }

    func testKnobs_RoundTripThroughTheScenario_WithEveryValueChanged() throws {
        var changed = Compatibility()
        changed.emailVerified = .string
        changed.isPrivateEmail = .string
        changed.defaultResponseMode = "fragment"
        changed.refreshReturnsIDToken.toggle()
        changed.refreshReturnsRefreshToken.toggle()
        changed.revokedConsentRefreshError = "invalid_grant"
        changed.refreshThrottle = RefreshThrottle(perDay: 2, error: "invalid_request")
        changed.pkcePlainAllowed.toggle()
        changed.clientSecretIATLeeway = 17
        changed.clientSecretClock = .real
        changed.clientSecretAudArray = .refuse
        changed.emailOnLaterLogins.toggle()
        changed.shuffleKeys.toggle()
        changed.authorizeErrorFormat = .json
        changed.authorizeErrorStatus = 418
        changed.strictRedirectURIs.toggle()
        changed.accountDeletionEventType = changed.accountDeletionEventType == "account-delete" ? "account-deleted" : "account-delete"
        changed.eventTimeUnit = changed.eventTimeUnit == .seconds ? .milliseconds : .seconds
        changed.revokeNotifies.toggle()
        changed.revokeRequiresToken.toggle()
        changed.tokenJSONBodyError = "invalid_request"
        changed.jwksCacheControl = "no-store"
        changed.eventsClaimFormat = changed.eventsClaimFormat == .string ? .object : .string
        changed.notificationRetryDelays = [1, 2]
        changed.relayDomain = .privateICloud
        for refusal in RelayRefusal.allCases { changed.relayRefusal[refusal] = "5.7.1 <{recipient}>: \(refusal.rawValue) here" }
        // Every field differs from its default, so a knob that is not read or not written shows.
        for (field, (left, right)) in zip(Mirror(reflecting: changed).children, zip(Mirror(reflecting: changed).children, Mirror(reflecting: Compatibility()).children)) {
            XCTAssertNotEqual(String(describing: left.value), String(describing: right.value), "\(field.label ?? "?") left at its default")
        }
        var scenario = Scenario.default
        scenario.compatibility = changed
        XCTAssertEqual(try Scenario.load(json: Array(scenario.prettyJSON.utf8)).compatibility, changed)
        // The twin: a bad value is refused at its path.
        guard case .object(var object) = try JSONParser.parse(Array(scenario.prettyJSON.utf8)), case .object(var knobs)? = object["compatibility"] else {
            return XCTFail("scenario JSON is not an object")
        }
        knobs["event_time_unit"] = "hours"
        object["compatibility"] = .object(knobs)
        let error = try XCTUnwrap(assertThrows(try Scenario.load(json: JSONWriter.compact(.object(object)))) as? ScenarioError)
        XCTAssertEqual(error.problems.map(\.path), ["compatibility.event_time_unit"])
    }
}
