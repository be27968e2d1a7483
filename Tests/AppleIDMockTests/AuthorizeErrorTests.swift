import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `/auth/authorize` configuration errors (docs/apple-behaviour.md §2.2): Apple's error page with a
/// code and message, status 400, never a redirect. Each refused request has an accepted twin.
final class AuthorizeErrorTests: XCTestCase {
    private static let clientOrRedirect = "Invalid client id or web redirect url."
    private static let unsupported = "Request missing required parameter or unsupported parameters or invalid redirect url"

    private let valid: [(String, String)] = [("client_id", "com.example.web"), ("redirect_uri", webRedirect),
                                             ("response_type", "code"), ("response_mode", "query"), ("state", "st")]

    /// `valid` with `name` replaced (nil removes it) or appended.
    private func with(_ name: String, _ value: String?) -> [(String, String)] {
        var parameters = valid.filter { $0.0 != name }
        if let value {
            if let index = valid.firstIndex(where: { $0.0 == name }) {
                parameters.insert((name, value), at: index)
            } else {
                parameters.append((name, value))
            }
        }
        return parameters
    }

    private func assertAccepted(_ mock: any MockClient, _ parameters: [(String, String)], file: StaticString = #filePath, line: UInt = #line) async throws {
        let page = try await mock.authorizePage(parameters)
        XCTAssertEqual(page.status, 200, page.text, file: file, line: line)
        XCTAssertEqual(hiddenFields(page.text).first.map { "\($0.0)=\($0.1)" }, "client_id=com.example.web", file: file, line: line)
    }

    private func assertRefused(_ mock: any MockClient, _ parameters: [(String, String)], code: String = "invalid_request",
                               message: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        assertAuthorizeErrorPage(try await mock.authorizePage(parameters), code: code, message: message, file: file, line: line)
    }

    func testAuthorize_RefusesUnknownClientAppIDAndUnregisteredRedirect_WithoutRedirecting() async throws {
        let mock = try frozenClient()
        try await assertAccepted(mock, valid)
        try await assertAccepted(mock, with("redirect_uri", otherWebRedirect))
        // A client id that is no client: Apple's page shows invalid_client (§2.2 [O]); a missing one, invalid_request.
        try await assertRefused(mock, with("client_id", "com.example.nope"), code: "invalid_client", message: Self.clientOrRedirect)
        try await assertRefused(mock, with("client_id", "COM.EXAMPLE.WEB"), code: "invalid_client", message: Self.clientOrRedirect) // case-sensitive (TN3107)
        try await assertRefused(mock, with("client_id", nil), message: Self.clientOrRedirect)
        try await assertRefused(mock, with("client_id", "com.example.app"), message: Self.clientOrRedirect) // an App ID is not a web client
        try await assertRefused(mock, with("redirect_uri", "http://localhost:3000/callback/"), message: Self.clientOrRedirect)
        try await assertRefused(mock, with("redirect_uri", "https://evil.example/callback"), message: Self.clientOrRedirect)
        // Errors are shown, never sent to the return URL, whatever the response_mode.
        for mode in ["query", "fragment", "form_post", "web_message"] {
            let parameters = with("client_id", "com.example.nope").map { $0.0 == "response_mode" ? ($0.0, mode) : $0 }
            let response = try await mock.authorizePage(parameters)
            assertAuthorizeErrorPage(response, code: "invalid_client", message: Self.clientOrRedirect)
            XCTAssertFalse(response.text.contains(webRedirect), mode)
        }
    }

    func testAuthorize_RefusesNameOrEmailScope_WhenResponseModeIsNotFormPost() async throws {
        let mock = try frozenClient()
        let message = "response_mode must be form_post when name or email scope is requested."
        for scope in ["name", "email", "name email", "openid email"] {
            try await assertRefused(mock, with("scope", scope), message: message)
            try await assertRefused(mock, with("scope", scope).map { $0.0 == "response_mode" ? ($0.0, "fragment") : $0 }, message: message)
            try await assertAccepted(mock, with("scope", scope).map { $0.0 == "response_mode" ? ($0.0, "form_post") : $0 })
            // Sign in with Apple JS's popup asks for scopes with web_message (§1.2).
            try await assertAccepted(mock, with("scope", scope).map { $0.0 == "response_mode" ? ($0.0, "web_message") : $0 })
        }
        // openid alone does not force form_post (§1.2).
        try await assertAccepted(mock, with("scope", "openid"))
    }

    func testAuthorize_RefusesIDTokenWithQueryMode_AcceptsFragmentAndFormPost() async throws {
        let mock = try frozenClient()
        try await assertRefused(mock, with("response_type", "code id_token"),
                          message: "response_mode must be fragment or form_post when id_token is requested.")
        for mode in ["fragment", "form_post", "web_message"] {
            try await assertAccepted(mock, with("response_type", "code id_token").map { $0.0 == "response_mode" ? ($0.0, mode) : $0 })
        }
        // `id_token` alone is not supported (§1.2).
        try await assertRefused(mock, with("response_type", "id_token").map { $0.0 == "response_mode" ? ($0.0, "fragment") : $0 },
                          message: Self.unsupported)
    }

    func testAuthorize_RefusesUnknownScope_WithInvalidScope() async throws {
        let mock = try frozenClient()
        try await assertRefused(mock, with("scope", "openid profile"), code: "invalid_scope", message: Self.unsupported)
        try await assertRefused(mock, with("scope", "user.migration"), code: "invalid_scope", message: Self.unsupported)
        try await assertAccepted(mock, with("scope", "openid"))
    }

    func testAuthorize_RefusesMissingOrUnknownResponseTypeAndMode() async throws {
        let mock = try frozenClient()
        try await assertRefused(mock, with("response_type", nil), message: Self.unsupported)
        try await assertRefused(mock, with("response_type", "token"), message: Self.unsupported)
        try await assertRefused(mock, with("response_mode", "web_messages"), message: Self.unsupported)
        try await assertRefused(mock, with("response_mode", "WEB_MESSAGE"), message: Self.unsupported)
        try await assertRefused(mock, with("response_mode", "okta_post_message"), message: Self.unsupported)
        try await assertAccepted(mock, with("response_mode", "web_message"))
        try await assertRefused(mock, with("redirect_uri", nil), message: Self.unsupported)
        // Omitted response_mode defaults to query (§1.2 [U]).
        try await assertAccepted(mock, with("response_mode", nil))
        let keepsQueryMode = hiddenFields(try await mock.authorizePage(with("response_mode", nil)).text).contains { $0 == ("response_mode", "query") }
        XCTAssertTrue(keepsQueryMode)
    }

    func testAuthorize_RefusesBadPKCE_AcceptsS256AndPlain() async throws {
        let mock = try frozenClient()
        let challenge = Base64URL.encode(SHA256.hash(Array("a-verifier-that-is-long-enough-for-rfc-7636-xyz".utf8)))
        try await assertAccepted(mock, with("code_challenge", challenge) + [("code_challenge_method", "S256")])
        try await assertAccepted(mock, with("code_challenge", challenge) + [("code_challenge_method", "plain")])
        try await assertAccepted(mock, with("code_challenge", challenge)) // method defaults to plain (RFC 7636 §4.3)
        try await assertRefused(mock, with("code_challenge", challenge) + [("code_challenge_method", "S512")], message: Self.unsupported)
        try await assertRefused(mock, with("code_challenge", challenge) + [("code_challenge_method", "s256")], message: Self.unsupported)
        try await assertRefused(mock, with("code_challenge", "too-short") + [("code_challenge_method", "S256")], message: Self.unsupported)
        try await assertRefused(mock, with("code_challenge_method", "S256"), message: Self.unsupported) // a method without a challenge
    }

    func testAuthorize_RefusesPlainPKCE_WhenPlainTurnedOff() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.pkcePlainAllowed = false }
        let challenge = String(repeating: "p", count: 43)
        try await assertRefused(mock, with("code_challenge", challenge) + [("code_challenge_method", "plain")], message: Self.unsupported)
        try await assertRefused(mock, with("code_challenge", challenge), message: Self.unsupported) // implicit plain
        try await assertAccepted(mock, with("code_challenge", challenge) + [("code_challenge_method", "S256")])
    }

    func testAuthorize_RefusesDuplicatedParameter() async throws {
        let mock = try frozenClient()
        try await assertRefused(mock, valid + [("state", "again")], message: Self.unsupported)
        try await assertAccepted(mock, valid + [("nonce", "once")])
    }

    func testAuthorize_JSONErrorFormat_AnswersTN3107CodesAndHeaders() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.authorizeErrorFormat = .json }
        let response = try await mock.authorizePage(with("client_id", "com.example.nope"))
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.text, #"{"error":"invalid_client"}"#)
        XCTAssertEqual(response.headers["Content-Type"], "application/json;charset=UTF-8")
        XCTAssertEqual(response.headers["Cache-Control"], "no-store")
        XCTAssertEqual(response.headers["Pragma"], "no-cache")
        XCTAssertNil(response.headers["Location"])
        var page = try await mock.authorizePage(with("redirect_uri", "https://evil.example/cb")).text
        XCTAssertEqual(page, #"{"error":"unauthorized_client"}"#)
        page = try await mock.authorizePage(valid.filter { $0.0 != "redirect_uri" }).text
        XCTAssertEqual(page, #"{"error":"unauthorized_client"}"#)
        page = try await mock.authorizePage(with("response_type", "token")).text
        XCTAssertEqual(page, #"{"error":"invalid_request"}"#)
        let scope = try await mock.authorizePage(with("scope", "profile"))
        XCTAssertEqual(scope.status, 400)
        XCTAssertEqual(scope.text, #"{"error":"invalid_scope"}"#)
        // Twin: a valid request still gets the consent page.
        try await assertAccepted(mock, valid)
    }

    func testAuthorize_StrictRedirectURIs_RefusesNonConformingReturnURLsPerRequest() async throws {
        let mock = try frozenClient { configuration in
            configuration.scenario.compatibility.strictRedirectURIs = true
            configuration.scenario.teams[0].clients[1].redirectURIs += ["https://10.0.0.1/cb", "https://app.example.com/cb#x"]
        }
        for uri in [webRedirect, "https://10.0.0.1/cb", "https://app.example.com/cb#x"] {
            assertAuthorizeErrorPage(try await mock.authorizePage(with("redirect_uri", uri)), code: "invalid_request", message: "Invalid web redirect url.")
        }
        try await assertAccepted(mock, with("redirect_uri", otherWebRedirect))
        // Off (the default), the same localhost callback is fine.
        let relaxed = try frozenClient()
        try await assertAccepted(relaxed, with("redirect_uri", webRedirect))
    }

    /// The consent page's own value (its hidden `mock_page`), fresh from a GET.
    private func pageTicket(_ mock: any MockClient) async throws -> (String, String) {
        let page = try await mock.authorizePage(valid)
        XCTAssertEqual(page.status, 200, page.text)
        return try XCTUnwrap(hiddenFields(page.text).first { $0.0 == "mock_page" })
    }

    func testAuthorize_ConsentPost_RevalidatesTheRequest() async throws {
        let mock = try frozenClient()
        // A forged consent answer for an unregistered return URL is refused like the GET.
        let forged = try await mock.postForm("/auth/authorize", with("redirect_uri", "https://evil.example/cb")
            + [try await pageTicket(mock), ("mock_user", "alice"), ("mock_action", "continue")])
        assertAuthorizeErrorPage(forged, code: "invalid_request", message: Self.clientOrRedirect)
        // Unknown user on the consent answer.
        let stranger = try await mock.postForm("/auth/authorize", valid + [try await pageTicket(mock), ("mock_user", "mallory"), ("mock_action", "continue")])
        assertAuthorizeErrorPage(stranger, code: "invalid_request", message: #"no user "mallory" in the scenario"#)
        // Twin: the honest answer redirects.
        let honest = try await mock.postForm("/auth/authorize", valid + [try await pageTicket(mock), ("mock_user", "alice"), ("mock_action", "continue")])
        XCTAssertEqual(honest.status, 302)
        XCTAssertTrue(matches(honest.headers["Location"], #"^http://localhost:3000/callback\?code=c[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}&state=st$"#))
    }

    func testAuthorize_ConsentPost_TakesOnlyAPageThisMockRendered_AndEachPageOnce_Q2() async throws {
        let mock = try frozenClient()
        // A form on another site knows every field but the page's value: Apple's error page, no code.
        for ticket: [(String, String)] in [[], [("mock_page", "")], [("mock_page", String(repeating: "0", count: 32))],
                                           [("mock_page", String(repeating: "a", count: 33))]] {
            let forged = try await mock.postForm("/auth/authorize", valid + ticket + [("mock_user", "alice"), ("mock_action", "continue")])
            assertAuthorizeErrorPage(forged, code: "invalid_request", message: Self.unsupported)
            XCTAssertNil(forged.headers["Location"])
        }
        let cancelled = try await mock.postForm("/auth/authorize", valid + [("mock_action", "cancel")])
        assertAuthorizeErrorPage(cancelled, code: "invalid_request", message: Self.unsupported)
        // Twin: the page's own value signs in, once; the same form sent again is refused.
        let ticket = try await pageTicket(mock)
        let first = try await mock.postForm("/auth/authorize", valid + [ticket, ("mock_user", "alice"), ("mock_action", "continue")])
        XCTAssertEqual(first.status, 302, first.text)
        let again = try await mock.postForm("/auth/authorize", valid + [ticket, ("mock_user", "alice"), ("mock_action", "continue")])
        assertAuthorizeErrorPage(again, code: "invalid_request", message: Self.unsupported)
        // Each page has its own value.
        let (one, two) = (try await pageTicket(mock), try await pageTicket(mock))
        XCTAssertNotEqual(one.1, two.1)
        XCTAssertTrue(matches(one.1, "^[0-9a-f]{32}$"), one.1)
    }

    func testAuthorizePages_RefuseToBeFramed_ConsentErrorRelayAndPopup_Q1() async throws {
        let mock = try frozenClient()
        func assertUnframeable(_ answer: MockAnswer, _ what: String) {
            XCTAssertEqual(answer.headers["X-Frame-Options"], "DENY", what)
            XCTAssertEqual(answer.headers["Content-Security-Policy"], "frame-ancestors 'none'", what)
        }
        assertUnframeable(try await mock.authorizePage(valid), "consent")
        assertUnframeable(try await mock.authorizePage(with("client_id", "com.example.nobody")), "error page")
        let relay = try await mock.postForm("/auth/authorize", with("response_mode", "form_post") + [try await pageTicket(mock), ("mock_user", "alice")])
        XCTAssertEqual(relay.status, 200, relay.text)
        assertUnframeable(relay, "form_post relay")
        let popup = try await mock.postForm("/auth/authorize", with("response_mode", "web_message") + [try await pageTicket(mock), ("mock_user", "alice")])
        XCTAssertTrue(popup.text.contains("postMessage"), popup.text)
        assertUnframeable(popup, "web_message page")
        // Twin: a redirect delivery is no page, and carries neither header.
        let redirect = try await mock.postForm("/auth/authorize", valid + [try await pageTicket(mock), ("mock_user", "alice")])
        XCTAssertEqual(redirect.status, 302)
        XCTAssertNil(redirect.headers["X-Frame-Options"])
    }
}
