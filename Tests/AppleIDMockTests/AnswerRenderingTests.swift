@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// The domain returns values; the endpoints write Apple's bytes (issue 36). Pure: each answer
/// value and each refusal, rendered, byte for byte (docs/apple-behaviour.md §1.3, §1.4, §8).
final class AnswerRenderingTests: XCTestCase {
    private func text(_ object: JSONObject) -> String { String(decoding: JSONWriter.compact(.object(object)), as: UTF8.self) }

    private func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    // MARK: - TokenAnswer

    func testTokenJSON_CodeExchange_IssuesARefreshTokenAndAnIDToken_InApplesOrder() {
        let answer = TokenAnswer(accessToken: "a.1", expiresIn: 3600, refreshToken: .issued("r.1"), idToken: "i.1")
        XCTAssertEqual(text(TokenEndpoint.json(answer)),
                       #"{"access_token":"a.1","token_type":"Bearer","expires_in":3600,"refresh_token":"r.1","id_token":"i.1"}"#)
    }

    func testTokenJSON_WritesRefreshTokenNull_OnlyWhenTheExchangeIssuesNone() {
        let none = TokenAnswer(accessToken: "a.2", expiresIn: 3600, refreshToken: .none, idToken: "i.2")
        XCTAssertEqual(text(TokenEndpoint.json(none)), #"{"access_token":"a.2","token_type":"Bearer","expires_in":3600,"refresh_token":null,"id_token":"i.2"}"#)
        // The twin: a refresh leaves the key out.
        let omitted = TokenAnswer(accessToken: "a.3", expiresIn: 3600, refreshToken: .omitted, idToken: "i.3")
        XCTAssertEqual(text(TokenEndpoint.json(omitted)), #"{"access_token":"a.3","token_type":"Bearer","expires_in":3600,"id_token":"i.3"}"#)
    }

    func testTokenJSON_ClientCredentials_HasNoIDToken() {
        let answer = TokenAnswer(accessToken: "a.4", expiresIn: 3600, refreshToken: .omitted, idToken: nil)
        XCTAssertEqual(text(TokenEndpoint.json(answer)), #"{"access_token":"a.4","token_type":"Bearer","expires_in":3600}"#)
    }

    // MARK: - TokenFailure, through the endpoint

    /// What `POST /auth/token` with `form` answers, the refusal rendered as the route table renders it.
    private func tokenResponse(_ form: [(String, String)]) throws -> HTTPResponse {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.log = { _ in }
        let endpoint = TokenEndpoint(domain: try AppleIDDomain(configuration: configuration))
        let request = HTTPRequest(method: .post, target: "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                  body: Array(HTTPForm.encode(form).utf8))
        do {
            return try endpoint.handle(request)
        } catch let error as OAuthError {
            return error.response
        }
    }

    func testTokenEndpoint_RendersEachRefusal_As400WithApplesBody() throws {
        // The accepted twin: client credentials with Apple's one scope is a grant, rendered as one.
        let granted = try tokenResponse([("grant_type", "client_credentials"), ("client_id", "com.example.app"), ("scope", "user.migration"),
                                         ("client_secret", try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.app",
                                                                                 privateKey: mockDeveloperKey, issuedAt: frozenNow, lifetime: 3600))])
        XCTAssertEqual(granted.status.code, 200)
        XCTAssertEqual(try jsonObject(granted.body).keys, ["access_token", "token_type", "expires_in"])
        let secret = try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.app", privateKey: mockDeveloperKey,
                                           issuedAt: frozenNow, lifetime: 3600)
        let cases: [([(String, String)], String)] = [
            ([("grant_type", "authorization_code"), ("code", "x"), ("client_id", "com.example.app"), ("client_secret", "x.y.z")],
             #"{"error":"invalid_client"}"#),
            ([("grant_type", "password"), ("client_id", "com.example.app"), ("client_secret", secret)], #"{"error":"unsupported_grant_type"}"#),
            ([("grant_type", "authorization_code"), ("code", "c-unknown"), ("client_id", "com.example.app"), ("client_secret", secret)],
             #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#),
            ([("grant_type", "client_credentials"), ("client_id", "com.example.app"), ("client_secret", secret)], #"{"error":"invalid_scope"}"#),
        ]
        for (form, body) in cases {
            let response = try tokenResponse(form)
            XCTAssertEqual(response.status.code, 400, "\(form)")
            XCTAssertEqual(text(response), body, "\(form)")
            XCTAssertEqual(response.headers["Cache-Control"], "no-store", "\(form)")
            XCTAssertEqual(response.headers["Content-Type"], "application/json;charset=UTF-8", "\(form)")
        }
    }

    func testOAuthError_RendersItsDescription_OnlyWhereAppleSendsOne() {
        XCTAssertEqual(text(OAuthError.codeExpired.response), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        XCTAssertEqual(text(OAuthError.codeAlreadyUsed.response), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        XCTAssertEqual(text(OAuthError.invalidGrant.response), #"{"error":"invalid_grant"}"#)
        XCTAssertEqual(OAuthError.invalidGrant.response.status.code, 400)
    }

    func testTokenSigningFailed_IsTheMocksOwnFault_NamingTheReason() {
        // Not one of Apple's refusals: the route table logs it and answers 500.
        let failure: any Error = TokenSigningFailed(reason: "no signing key is published")
        XCTAssertNil(failure as? any HTTPResponseError)
        XCTAssertEqual(TokenSigningFailed(reason: "no signing key is published").description, "signing the id_token failed: no signing key is published")
    }

    // MARK: - MigrationAnswer

    func testMigrationJSON_SendingTeamGetsTransferSub_ReceivingTeamGetsSubAndItsRelayAddress() {
        XCTAssertEqual(text(MigrationEndpoint.json(.transferSubject("t.1"))), #"{"transfer_sub":"t.1"}"#)
        XCTAssertEqual(text(MigrationEndpoint.json(.subject("s.1", relayEmail: "x@privaterelay.appleid.com"))),
                       #"{"sub":"s.1","email":"x@privaterelay.appleid.com","is_private_email":true}"#)
        // The twin: a user who did not hide their email gets the sub alone.
        XCTAssertEqual(text(MigrationEndpoint.json(.subject("s.2", relayEmail: nil))), #"{"sub":"s.2"}"#)
    }

    // MARK: - SignInRefusal

    func testSignInRefusal_Invalid_Is400NamingTheField() {
        let response = AppleIDDomain.SignInRefusal.invalid(field: "user", message: "no user \"zed\" in the scenario").response
        XCTAssertEqual(response.status.code, 400)
        XCTAssertEqual(text(response), #"{"error":"no user \"zed\" in the scenario","field":"user"}"#)
    }

    func testSignInRefusal_Full_Is503WithNoField() {
        let response = AppleIDDomain.SignInRefusal.full(CapacityError(message: "the mock holds 100000 codes already")).response
        XCTAssertEqual(response.status.code, 503)
        XCTAssertEqual(text(response), #"{"error":"the mock holds 100000 codes already","field":null}"#)
    }

    func testSignInRefusal_Signing_Is500() {
        let response = AppleIDDomain.SignInRefusal.signing("no signing key is published").response
        XCTAssertEqual(response.status.code, 500)
        XCTAssertEqual(text(response), #"{"error":"the token could not be signed: no signing key is published","field":null}"#)
    }

    func testSignInRoute_AnswersTheRefusalAsRendered() async throws {
        let mock = try inMemoryMock()
        addTeardownBlock { await mock.stop() }
        let refused = await mock.postJSON("/__mock/sign-in", #"{"user":"zed","client_id":"com.example.app"}"#)
        XCTAssertEqual(refused.status.code, 400)
        XCTAssertEqual(refused.text, #"{"error":"no user \"zed\" in the scenario","field":"user"}"#)
        // The twin: a known user signs in.
        let accepted = await mock.postJSON("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(accepted.status.code, 200, accepted.text)
    }
}
