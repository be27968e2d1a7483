import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// A Services ID or key that Apple has not propagated yet (apple-behaviour.md §3 [O]: hours, up
/// to about two days after creation): `propagation_seconds` on a client or developer key makes
/// it answer `invalid_client` until that much mock time after the clock's start or a reset.
final class PropagationTests: XCTestCase {
    private let authorize: [(String, String)] = [("client_id", "com.example.web"), ("redirect_uri", webRedirect),
                                                 ("response_type", "code"), ("response_mode", "query"), ("state", "st")]

    func testANewServicesID_AnswersInvalidClientEverywhere_UntilItsPropagationIsOver_ThenWorks() async throws {
        let mock = try frozenClient { configuration in
            configuration.scenario.teams[0].clients[1].propagationSeconds = 3600
        }
        // At the start, and one second before the hour is over.
        for advance in [0, 3599] as [Double] {
            try await mock.advanceClock(by: advance)
            assertAppleError(try await mock.clientCredentials(), #"{"error":"invalid_client"}"#)
            assertAppleError(try await mock.revoke("any-token"), #"{"error":"invalid_client"}"#)
            assertAuthorizeErrorPage(try await mock.authorizePage(authorize), code: "invalid_client", message: "Invalid client id or web redirect url.")
            // Its App ID, created long ago, works meanwhile.
            try assertTokenAnswer(try await mock.clientCredentials("com.example.app"), keys: ["access_token", "token_type", "expires_in"])
        }
        try await mock.advanceClock(by: 1)
        try assertTokenAnswer(try await mock.clientCredentials(), keys: ["access_token", "token_type", "expires_in"])
        let revoked = try await mock.revoke("any-token")
        XCTAssertEqual(revoked.status, 200, revoked.text)
        let page = try await mock.authorizePage(authorize)
        XCTAssertEqual(page.status, 200, page.text)
        // A reset is a new start: the Services ID propagates again.
        let reset = try await mock.postJSON("/__mock/reset", "{}")
        XCTAssertEqual(reset.status, 200, reset.text)
        assertAppleError(try await mock.clientCredentials(), #"{"error":"invalid_client"}"#)
    }

    func testANewDeveloperKey_SignsNoAcceptedSecret_UntilItsPropagationIsOver() async throws {
        for (seconds, expected) in [(600, 400), (0, 200)] {
            let mock = try frozenClient { configuration in
                configuration.scenario.teams[0].developerKeys[0].propagationSeconds = seconds
            }
            let code = try await mock.webCode()
            let answer = try await mock.redeem(code)
            XCTAssertEqual(answer.status, expected, "\(seconds): \(answer.text)")
            guard expected == 400 else { continue }
            XCTAssertEqual(answer.text, #"{"error":"invalid_client"}"#)
            try await mock.advanceClock(by: 600)
            // The code is still good (its five minutes count from issue: a fresh one).
            try assertTokenAnswer(try await mock.redeem(try await mock.webCode()),
                                  keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        }
    }

    func testPropagation_IsLogged_WithTheMockTimeItEnds() async throws {
        let capture = LogCapture()
        let mock = try frozenClient { configuration in
            configuration.scenario.teams[0].clients[1].propagationSeconds = 90
            configuration.log = capture.sink
        }
        _ = capture.take()
        assertAppleError(try await mock.clientCredentials(), #"{"error":"invalid_client"}"#)
        XCTAssertEqual(capture.take(), ["refused POST /auth/token: invalid_client — client_id com.example.web is still propagating at Apple until mock time "
                                        + "2023-11-14T22:14:50Z (propagation_seconds 90 after the clock's start 2023-11-14T22:13:20Z; now 2023-11-14T22:13:20Z): "
                                        + "move the clock on with POST /__mock/clock"])
    }
}
