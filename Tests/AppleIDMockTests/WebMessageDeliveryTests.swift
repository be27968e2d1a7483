@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `response_mode=web_message` (docs/apple-behaviour.md §1.2 "web_message"): Sign in with Apple
/// JS's popup posts `JSON.stringify({method: "oauthDone", data})` to `window.opener`, for the
/// redirect URI's origin only; the redirect URI receives nothing.
final class WebMessageDeliveryTests: XCTestCase {
    private func request(type: String = "code id_token", scope: String? = "name email", state: String = "st-1") -> [(String, String)] {
        var parameters = [("client_id", "com.example.web"), ("redirect_uri", webRedirect), ("response_type", type),
                          ("response_mode", "web_message"), ("state", state), ("nonce", "n-1")]
        if let scope { parameters.append(("scope", scope)) }
        // What Apple's script adds; the mock takes and ignores them.
        parameters += [("frame_id", "0d3d1c5e-2b8a-4b7a-9a4e-1f2d3c4b5a69"), ("m", "12"), ("v", "1.5.5")]
        return parameters
    }

    /// GET then POST of the consent page with alice, Continue or Cancel.
    private func signIn(_ mock: any MockClient, _ parameters: [(String, String)], action: String = "continue") async throws -> MockAnswer {
        let page = try await mock.authorizePage(parameters)
        XCTAssertEqual(page.status, 200, page.text)
        return try await mock.postForm("/auth/authorize", hiddenFields(page.text) + [("mock_user", "alice"), ("mock_action", action)])
    }

    /// The message and target origin a popup page posts, decoded from its script, after checking
    /// it is a 200 page that redirects nowhere and posts only to its opener.
    private func posted(_ response: MockAnswer, file: StaticString = #filePath, line: UInt = #line) throws -> (message: String, origin: String) {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        XCTAssertNil(response.headers["Location"], file: file, line: line)
        XCTAssertEqual(response.headers["Content-Type"], "text/html; charset=utf-8", file: file, line: line)
        XCTAssertEqual(response.headers["Cache-Control"], "no-store", file: file, line: line)
        XCTAssertFalse(response.text.contains("<form"), file: file, line: line)
        XCTAssertTrue(response.text.contains("if (!window.opener) {"), file: file, line: line)
        XCTAssertTrue(response.text.contains("window.opener.postMessage(message, targetOrigin);"), file: file, line: line)
        let message = try XCTUnwrap(capture(#"var message = ("[^\n]*");\n"#, in: response.text), file: file, line: line)
        let origin = try XCTUnwrap(capture(#"var targetOrigin = ("[^\n]*");\n"#, in: response.text), file: file, line: line)
        return (try XCTUnwrap(JSONParser.parse(message).stringValue), try XCTUnwrap(JSONParser.parse(origin).stringValue))
    }

    func testAuthorize_WebMessage_PostsOauthDoneEnvelopeToTheRedirectOrigin_UserOnFirstSignInOnly() async throws {
        let mock = try frozenClient()
        let (message, origin) = try posted(try await signIn(mock, request()))
        XCTAssertEqual(origin, "http://localhost:3000")
        let code = try XCTUnwrap(capture(#""code":"([^"]*)""#, in: message))
        let idToken = try XCTUnwrap(capture(#""id_token":"([^"]*)""#, in: message))
        XCTAssertTrue(matches(code, codePattern), code)
        XCTAssertEqual(message, #"{"method":"oauthDone","data":{"authorization":{"code":"\#(code)","id_token":"\#(idToken)","state":"st-1"},"#
            + #""user":{"email":"alice@example.com","name":{"firstName":"Alice","lastName":"Appleseed"}}}}"#)
        let claims = try await mock.verifiedClaims(idToken)
        XCTAssertEqual(claims["nonce"], "n-1")
        XCTAssertEqual(claims["sub"], .string(teamSub("alice")))
        try assertTokenAnswer(try await mock.redeem(code), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])

        // Twin: the second sign-in of the same user carries no `user`.
        let again = try posted(try await signIn(mock, request(state: "st-2"))).message
        let secondCode = try XCTUnwrap(capture(#""code":"([^"]*)""#, in: again))
        let secondToken = try XCTUnwrap(capture(#""id_token":"([^"]*)""#, in: again))
        XCTAssertEqual(again, #"{"method":"oauthDone","data":{"authorization":{"code":"\#(secondCode)","id_token":"\#(secondToken)","state":"st-2"}}}"#)
    }

    func testAuthorize_WebMessage_CancelPostsUserCancelledAuthorize() async throws {
        let mock = try frozenClient()
        let (message, origin) = try posted(try await signIn(mock, request(), action: "cancel"))
        XCTAssertEqual(message, #"{"method":"oauthDone","data":{"error":"user_cancelled_authorize"}}"#)
        XCTAssertEqual(origin, "http://localhost:3000")

        // Twin: the same request continued is a sign-in.
        let continued = try posted(try await signIn(mock, request())).message
        XCTAssertTrue(continued.hasPrefix(#"{"method":"oauthDone","data":{"authorization":{"code":"#), continued)
    }

    func testAuthorize_WebMessage_ScriptCannotBeClosedByState() async throws {
        let mock = try frozenClient()
        let state = "</script><script>alert(1)</script>&\u{2028}"
        let response = try await signIn(mock, request(type: "code", scope: nil, state: state))
        XCTAssertFalse(response.text.contains("alert(1)</script>"))
        XCTAssertTrue(response.text.contains(#"\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e\u0026\u2028"#))
        let message = try posted(response).message
        XCTAssertTrue(message.hasSuffix(#","state":"</script><script>alert(1)</script>&\#u{2028}"}}}"#), message)
    }

    func testAuthorizePage_WebMessage_RefusesToRenderWithoutAnOpener() async throws {
        let mock = try frozenClient()
        let page = try await mock.authorizePage(request())
        XCTAssertTrue(page.text.contains(#"<form method="post" action="/auth/authorize" id="consent">"#))
        XCTAssertTrue(page.text.contains(#"if (!window.opener) { document.getElementById("consent").outerHTML = "#), page.text)
        XCTAssertTrue(hiddenFields(page.text).contains { $0 == ("response_mode", "web_message") })

        // Twin: a form_post consent page works in any window.
        let formPost = try await mock.authorizePage(request().map { $0.0 == "response_mode" ? ($0.0, "form_post") : $0 })
        XCTAssertEqual(formPost.status, 200)
        XCTAssertFalse(formPost.text.contains("window.opener"))
    }

    func testAuthorize_WebMessage_AutoApprovePostsAtOnce() async throws {
        let mock = try frozenClient { $0.scenario.autoApprove = .init(user: "bob") }
        let message = try posted(try await mock.authorizePage(request(scope: "email"))).message
        XCTAssertTrue(matches(message, #"^\{"method":"oauthDone","data":\{"authorization":\{"code":"[^"]+","id_token":"[^"]+","state":"st-1"\},"user":\{"email":"[^"]+"\}\}\}$"#), message)
    }

    func testHeadlessAuthorize_WebMessage_AnswersTheMessageAndTargetOrigin() async throws {
        let mock = try frozenClient()
        let response = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","response_mode":"web_message","scope":"name","state":"s1","user":"alice","given_name":"Al"}"#)
        XCTAssertEqual(response.status, 200, response.text)
        let message = try XCTUnwrap(try jsonObject(response.body)["message"]?.stringValue)
        let code = try XCTUnwrap(capture(#""code":"([^"]*)""#, in: message))
        XCTAssertEqual(message, #"{"method":"oauthDone","data":{"authorization":{"code":"\#(code)","state":"s1"},"user":{"name":{"firstName":"Al","lastName":"Appleseed"}}}}"#)
        XCTAssertEqual(response.text, #"{"message":"{\"method\":\"oauthDone\",\"data\":{\"authorization\":{\"code\":\"\#(code)\",\"state\":\"s1\"},\"user\":{\"name\":{\"firstName\":\"Al\",\"lastName\":\"Appleseed\"}}}}","method":"postMessage","target_origin":"https://app.example.com"}"#)
        try assertTokenAnswer(try await mock.redeem(code, redirectURI: otherWebRedirect),
                              keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])

        let cancelled = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","response_mode":"web_message","cancel":true}"#)
        XCTAssertEqual(cancelled.text, #"{"message":"{\"method\":\"oauthDone\",\"data\":{\"error\":\"user_cancelled_authorize\"}}","method":"postMessage","target_origin":"https://app.example.com"}"#)

        // Twin: an unknown response_mode is refused as Apple refuses it.
        let refused = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"https://app.example.com/callback","response_type":"code","response_mode":"web_msg","user":"alice"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.text, #"{"apple_error":"invalid_request","error":"Request missing required parameter or unsupported parameters or invalid redirect url","field":"response_mode"}"#)
    }

    func testDeliveryTargetOrigin_IsSchemeHostAndPortOfTheRedirectURI() {
        let cases: [(String, String)] = [
            ("https://app.example.com/callback", "https://app.example.com"),
            ("HTTPS://App.Example.com:443/cb?x=1#y", "https://app.example.com"),
            ("http://localhost:3000/callback", "http://localhost:3000"),
            ("http://user:pw@localhost:80", "http://localhost"),
            ("https://app.example.com:8443?next=/x", "https://app.example.com:8443"),
        ]
        for (uri, origin) in cases {
            XCTAssertEqual(Delivery(responseMode: .webMessage, redirectURI: uri, parameters: []).targetOrigin, origin, uri)
        }
        // Twin: a port is part of the origin, so another port is another origin.
        XCTAssertNotEqual(Delivery(responseMode: .webMessage, redirectURI: "http://localhost:3001/cb", parameters: []).targetOrigin,
                          "http://localhost:3000")
    }
}
