import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `POST /__mock/authorize`: the authorize flow without a browser, answering how Apple would
/// deliver the result (sorted keys; errors name the field).
final class HeadlessAuthorizeTests: XCTestCase {
    private func post(_ mock: any MockClient, _ body: String) async throws -> MockAnswer {
        try await mock.postJSON("/__mock/authorize", body)
    }

    func testHeadlessAuthorize_FormPost_AnswersPostFormForTheCallback() async throws {
        let mock = try frozenClient()
        let response = try await post(mock, #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","response_mode":"form_post","scope":"name email","state":"s1","user":"alice"}"#)
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.headers["Content-Type"], "application/json")
        let code = try XCTUnwrap(try jsonObject(response.body)["form"]?.objectValue?["code"]?.stringValue)
        XCTAssertTrue(matches(code, codePattern), code)
        XCTAssertEqual(response.text, #"{"form":{"code":"\#(code)","state":"s1","user":"{\"name\":{\"firstName\":\"Alice\",\"lastName\":\"Appleseed\"},\"email\":\"alice@example.com\"}"},"method":"POST","url":"https://app.example.com/callback"}"#)
        try assertTokenAnswer(try await mock.redeem(code, redirectURI: otherWebRedirect),
                              keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
    }

    func testHeadlessAuthorize_Query_AnswersGetRedirectURL() async throws {
        let mock = try frozenClient()
        let response = try await post(mock, #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","response_mode":"query","state":"s1","user":"bob"}"#)
        XCTAssertEqual(response.status, 200, response.text)
        let url = try XCTUnwrap(try jsonObject(response.body)["url"]?.stringValue)
        XCTAssertTrue(matches(url, #"^https://app\.example\.com/callback\?code=c[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}&state=s1$"#), url)
        XCTAssertEqual(response.text, #"{"form":{},"method":"GET","url":"\#(url)"}"#)

        // Cancel: the error travels the same way.
        let cancelled = try await post(mock, #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","response_mode":"fragment","state":"s2","cancel":true}"#)
        XCTAssertEqual(cancelled.text, #"{"form":{},"method":"GET","url":"https://app.example.com/callback#error=user_cancelled_authorize&state=s2"}"#)
    }

    func testHeadlessAuthorize_ErrorsNameTheField() async throws {
        let mock = try frozenClient()
        let cases: [(String, String)] = [
            (#"{"client_id":"com.example.web","redirect_uri":"https://evil.example/cb","response_type":"code","user":"alice"}"#,
             #"{"apple_error":"invalid_request","error":"Invalid client id or web redirect url.","field":"redirect_uri"}"#),
            (#"{"client_id":"com.example.app","redirect_uri":"https://app.example.com/callback","response_type":"code","user":"alice"}"#,
             #"{"apple_error":"invalid_request","error":"Invalid client id or web redirect url.","field":"client_id"}"#),
            (#"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","scope":"email","user":"alice"}"#,
             #"{"apple_error":"invalid_request","error":"response_mode must be form_post when name or email scope is requested.","field":"response_mode"}"#),
            (#"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","scope":"phone","response_mode":"form_post","user":"alice"}"#,
             #"{"apple_error":"invalid_scope","error":"Request missing required parameter or unsupported parameters or invalid redirect url","field":"scope"}"#),
            (#"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","user":"mallory"}"#,
             #"{"apple_error":"invalid_request","error":"no user \"mallory\" in the scenario","field":"user"}"#),
            (#"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code"}"#,
             #"{"error":"missing required field","field":"user"}"#),
        ]
        for (body, expected) in cases {
            let response = try await post(mock, body)
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(response.text, expected, body)
        }
        // Twin: the first case with the registered URL succeeds.
        let ok = try await post(mock, #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","user":"alice"}"#)
        XCTAssertEqual(ok.status, 200, ok.text)
    }
}
