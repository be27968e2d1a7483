import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// A client_secret's `aud` may be Apple's audience as a string or, as Go's golang-jwt writes its
/// `RegisteredClaims` by default, as a one-element array of it (RFC 7519 §4.1.3 allows both);
/// any other array is `invalid_client` with its reason on the log, and
/// `compatibility.client_secret_aud_array: "refuse"` takes the string only.
final class ClientSecretAudienceTests: XCTestCase {
    private let invalidClient = #"{"error":"invalid_client"}"#

    /// A secret laid out byte for byte as golang-jwt v5 makes one from `jwt.RegisteredClaims`
    /// with `jwt.SigningMethodES256` and a `kid` header: the header's keys sorted (Go marshals a
    /// map), the claims in the struct's field order, `aud` a JSON array (`ClaimStrings` with
    /// `MarshalSingleStringAsArray` true, the default).
    private func goSecret(audience: [String], clientID: String = "com.example.web", issuedAt: Int64 = frozenNow) throws -> String {
        let header = #"{"alg":"ES256","kid":"MOCKKEY001","typ":"JWT"}"#
        let audienceJSON = "[" + audience.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let claims = #"{"iss":"MOCKTEAM01","sub":"\#(clientID)","aud":\#(audienceJSON),"exp":\#(issuedAt + 3600),"iat":\#(issuedAt)}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        return input + "." + Base64URL.encode(try mockDeveloperKey.signES256(Array(input.utf8)))
    }

    func testClientSecret_RedeemsACode_WhenAudIsTheGoStyleOneElementArray() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let secret = try goSecret(audience: ["https://appleid.apple.com"])
        let tokens = try assertTokenAnswer(try server.redeem(try server.webCode(), secret: secret),
                                           keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let claims = try server.verifiedClaims(tokens["id_token"]?.stringValue)
        XCTAssertEqual(claims["aud"], "com.example.web")
        // The twin: the same secret with the string form redeems too, and a second redemption of
        // the first code is refused as always (the array changed nothing else).
        let stringSecret = try server.secret(audience: "https://appleid.apple.com")
        XCTAssertEqual(try server.redeem(try server.webCode(), secret: stringSecret).status, 200)
    }

    func testClientSecret_RefusesEveryOtherArray_WithItsReason() throws {
        let capture = LogCapture()
        let server = try startFrozenMock { [capture] in $0.log = capture.sink }
        defer { server.stop() }
        let cases: [([String], String)] = [
            (["https://appleid.apple.com", "x"], "an array of 2 audiences"),
            (["x"], #"the array ["x"]"#),
            ([], "an empty array"),
            (["https://appleid.apple.com/"], #"the array ["https://appleid.apple.com/"]"#),
        ]
        for (audience, shown) in cases {
            _ = capture.take()
            let answer = try server.redeem(try server.webCode(), secret: try goSecret(audience: audience))
            assertAppleError(answer, invalidClient)
            XCTAssertEqual(capture.take(), ["refused POST /auth/token: invalid_client — client_secret aud is \(shown) but must be "
                                            + "https://appleid.apple.com (alone, as a string or a one-element array)"], "\(audience)")
        }
        _ = capture.take()
        XCTAssertEqual(try server.redeem(try server.webCode(), secret: try goSecret(audience: ["https://appleid.apple.com"])).status, 200)
        XCTAssertEqual(capture.take(), [])
    }

    func testClientSecret_RefusesTheArray_WhenTheKnobSaysRefuse() throws {
        let capture = LogCapture()
        let server = try startFrozenMock { [capture] in
            $0.log = capture.sink
            $0.scenario.compatibility.clientSecretAudArray = .refuse
        }
        defer { server.stop() }
        assertAppleError(try server.redeem(try server.webCode(), secret: try goSecret(audience: ["https://appleid.apple.com"])), invalidClient)
        XCTAssertEqual(capture.take(), ["refused POST /auth/token: invalid_client — client_secret aud is an array [https://appleid.apple.com] "
                                        + "but compatibility.client_secret_aud_array is \"refuse\" (Apple's text writes aud as a string)"])
        // Twin: the string form still passes under the knob.
        XCTAssertEqual(try server.redeem(try server.webCode(), secret: try server.secret()).status, 200)
    }

    func testScenario_ReadsAndWritesTheAudArrayKnob() throws {
        guard case .object(var object) = Scenario.default.json, case .object(var knobs)? = object["compatibility"] else {
            return XCTFail("the default scenario has a compatibility object")
        }
        knobs["client_secret_aud_array"] = "maybe"
        object["compatibility"] = .object(knobs)
        XCTAssertThrowsError(try Scenario.load(json: JSONWriter.compact(.object(object)))) { error in
            XCTAssertEqual((error as? ScenarioError)?.problems.map(\.description),
                           [#"compatibility.client_secret_aud_array: expected "accept" or "refuse", found "maybe""#])
        }
        for value in ["accept", "refuse"] {
            knobs["client_secret_aud_array"] = .string(value)
            object["compatibility"] = .object(knobs)
            XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(object))).compatibility.clientSecretAudArray.rawValue, value)
        }
        XCTAssertTrue(Scenario.default.prettyJSON.contains(#""client_secret_aud_array": "accept""#), Scenario.default.prettyJSON)
    }
}
