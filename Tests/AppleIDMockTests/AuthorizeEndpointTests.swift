import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// The browser flow of `/auth/authorize`, in memory (docs/apple-behaviour.md §1.2, §5, §6):
/// GET shows the consent page, POST (the consent form) delivers per `response_mode`.
final class AuthorizeEndpointTests: XCTestCase {
    private func request(mode: String, type: String = "code", scope: String? = nil, state: String = "st-1",
                         nonce: String? = "n-1") -> [(String, String)] {
        var parameters = [("client_id", "com.example.web"), ("redirect_uri", webRedirect), ("response_type", type), ("response_mode", mode)]
        if let scope { parameters.append(("scope", scope)) }
        parameters.append(("state", state))
        if let nonce { parameters.append(("nonce", nonce)) }
        return parameters
    }

    /// GETs the consent page and returns its hidden fields (failing unless it is a 200 page).
    private func consentFields(_ mock: any MockClient, _ parameters: [(String, String)],
                               file: StaticString = #filePath, line: UInt = #line) async throws -> [(String, String)] {
        let page = try await mock.authorizePage(parameters)
        XCTAssertEqual(page.status, 200, page.text, file: file, line: line)
        XCTAssertEqual(page.headers["Content-Type"], "text/html; charset=utf-8", file: file, line: line)
        return hiddenFields(page.text)
    }

    /// Walks GET then POST: submits the consent page's own hidden fields plus the user's choices.
    private func signIn(_ mock: any MockClient, _ parameters: [(String, String)], user: String = "alice", email: String? = nil,
                        givenName: String? = nil, familyName: String? = nil, action: String = "continue",
                        file: StaticString = #filePath, line: UInt = #line) async throws -> MockAnswer {
        var form = try await consentFields(mock, parameters, file: file, line: line)
        form.append(("mock_user", user))
        if let email { form.append(("mock_email", email)) }
        if let givenName { form.append(("mock_given_name", givenName)) }
        if let familyName { form.append(("mock_family_name", familyName)) }
        form.append(("mock_action", action))
        return try await mock.postForm("/auth/authorize", form)
    }

    /// The hidden fields of a form_post delivery, after checking it posts to the return URL.
    private func postedFields(_ response: MockAnswer, to redirectURI: String = webRedirect,
                              file: StaticString = #filePath, line: UInt = #line) -> [(String, String)] {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        XCTAssertNil(response.headers["Location"], file: file, line: line)
        XCTAssertEqual(response.headers["Content-Type"], "text/html; charset=utf-8", file: file, line: line)
        XCTAssertTrue(response.text.contains(#"<form method="post" action="\#(redirectURI)" id="response">"#), response.text, file: file, line: line)
        return hiddenFields(response.text)
    }

    private func value(_ name: String, in pairs: [(String, String)]) -> String? {
        pairs.first { $0.0 == name }?.1
    }

    // MARK: - Consent page

    func testAuthorizePage_ShowsConsentFormCarryingTheRequest_WhenRequestValid() async throws {
        let mock = try frozenClient()
        let parameters = request(mode: "form_post", scope: "name email")
        let page = try await mock.authorizePage(parameters)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers["Content-Type"], "text/html; charset=utf-8")
        XCTAssertNil(page.headers["Location"])
        let fields = hiddenFields(page.text)
        assertPairs(fields.filter { $0.0 != "mock_page" }, parameters)
        // Last, the page's own value, which its POST must carry (ConsentTickets).
        XCTAssertEqual(fields.last?.0, "mock_page")
        XCTAssertTrue(matches(fields.last?.1, "^[0-9a-f]{32}$"), "\(fields)")
        XCTAssertTrue(page.text.contains(#"<form method="post" action="/auth/authorize" id="consent">"#))
        XCTAssertTrue(page.text.contains(#"name="mock_user" value="alice" checked"#))
        XCTAssertTrue(page.text.contains(#"name="mock_user" value="bob""#))
        XCTAssertTrue(page.text.contains(#"name="mock_email" value="hide""#))
        XCTAssertTrue(page.text.contains(#"name="mock_given_name""#))

        // Twin: the same request to an unregistered return URL gets the error page, not a form.
        var tampered = parameters
        tampered[1] = ("redirect_uri", "http://localhost:3000/other")
        let refused = try await mock.authorizePage(tampered)
        assertAuthorizeErrorPage(refused, code: "invalid_request", message: "Invalid client id or web redirect url.")
        XCTAssertTrue(hiddenFields(refused.text).isEmpty)
    }

    // MARK: - Delivery per response_mode

    func testAuthorize_QueryMode_RedirectsWithCodeAndState() async throws {
        let mock = try frozenClient()
        let response = try await signIn(mock, request(mode: "query", state: "s t&x"))
        XCTAssertEqual(response.status, 302)
        XCTAssertEqual(response.body, [])
        XCTAssertEqual(response.headers["Cache-Control"], "no-store")
        let location = try XCTUnwrap(response.headers["Location"])
        XCTAssertTrue(matches(location, #"^http://localhost:3000/callback\?code=c[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}&state=s\+t%26x$"#), location)
        let pairs = formPairs(String(location.split(separator: "?", maxSplits: 1)[1]))
        XCTAssertEqual(pairs.map(\.0), ["code", "state"])
        XCTAssertEqual(value("state", in: pairs), "s t&x")
        // The delivered code is real: it redeems once.
        try assertTokenAnswer(try await mock.redeem(try XCTUnwrap(value("code", in: pairs))),
                              keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])

        // Twin: Cancel delivers Apple's only redirected error, with the state.
        let cancelled = try await signIn(mock, request(mode: "query", state: "st-2"), action: "cancel")
        XCTAssertEqual(cancelled.status, 302)
        XCTAssertEqual(cancelled.headers["Location"], "http://localhost:3000/callback?error=user_cancelled_authorize&state=st-2")
    }

    func testAuthorize_FragmentMode_RedirectsWithFragment() async throws {
        let mock = try frozenClient()
        let response = try await signIn(mock, request(mode: "fragment"))
        XCTAssertEqual(response.status, 302)
        let location = try XCTUnwrap(response.headers["Location"])
        XCTAssertTrue(matches(location, #"^http://localhost:3000/callback#code=c[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}&state=st-1$"#), location)
        XCTAssertFalse(location.contains("?"))

        let cancelled = try await signIn(mock, request(mode: "fragment"), action: "cancel")
        XCTAssertEqual(cancelled.status, 302)
        XCTAssertEqual(cancelled.headers["Location"], "http://localhost:3000/callback#error=user_cancelled_authorize&state=st-1")
    }

    func testAuthorize_FormPost_PostsCodeStateAndUserToTheReturnURL() async throws {
        let mock = try frozenClient()
        let fields = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name email")))
        XCTAssertEqual(fields.map(\.0), ["code", "state", "user"])
        XCTAssertTrue(matches(value("code", in: fields), codePattern))
        XCTAssertEqual(value("state", in: fields), "st-1")
        XCTAssertEqual(value("user", in: fields), #"{"name":{"firstName":"Alice","lastName":"Appleseed"},"email":"alice@example.com"}"#)

        // Markup in the state survives the hidden field escaped, on the consent page and the
        // form_post page alike.
        let tricky = #"a"b<c>&'d"#
        let escaped = postedFields(try await signIn(mock, request(mode: "form_post", scope: "openid", state: tricky)))
        XCTAssertEqual(value("state", in: escaped), tricky)

        // Twin: Cancel posts the error and the state, and nothing else.
        let cancelled = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name email", state: "st-9"), action: "cancel"))
        assertPairs(cancelled, [("error", "user_cancelled_authorize"), ("state", "st-9")])
    }

    func testAuthorize_HybridCodeIDToken_DeliversIDTokenWithCHashNonceAndAuthTime() async throws {
        let mock = try frozenClient()
        let response = try await signIn(mock, request(mode: "fragment", type: "code id_token", scope: "openid", nonce: "nonce-42"))
        XCTAssertEqual(response.status, 302)
        let location = try XCTUnwrap(response.headers["Location"])
        let pairs = formPairs(String(try XCTUnwrap(location.split(separator: "#", maxSplits: 1).last)))
        XCTAssertEqual(pairs.map(\.0), ["code", "id_token", "state"])
        let code = try XCTUnwrap(value("code", in: pairs))
        let payload = try await mock.verifiedPayload(value("id_token", in: pairs))
        XCTAssertEqual(payload, #"{"iss":"https://appleid.apple.com","aud":"com.example.web","exp":1700086400,"iat":1700000000,"sub":"\#(teamSub("alice"))","nonce":"nonce-42","c_hash":"\#(leftHalfHash(code))","auth_time":1700000000,"nonce_supported":true}"#)

        // form_post with name/email: the id_token also carries the email, and the c_hash is of
        // this code, not another.
        let posted = postedFields(try await signIn(mock, request(mode: "form_post", type: "code id_token", scope: "name email"), user: "bob",
                                             email: "share"))
        XCTAssertEqual(posted.map(\.0), ["code", "id_token", "state", "user"])
        let claims = try await mock.verifiedClaims(value("id_token", in: posted))
        XCTAssertEqual(claims["c_hash"], .string(leftHalfHash(try XCTUnwrap(value("code", in: posted)))))
        XCTAssertNotEqual(claims["c_hash"], .string(leftHalfHash(code)))
        XCTAssertEqual(claims["email"], "bob@example.com")
        XCTAssertNil(claims["is_private_email"], "a shared address has no is_private_email claim")
        XCTAssertNil(claims["real_user_status"], "never for web")

        // Twin: plain `code` delivers no id_token.
        let plain = postedFields(try await signIn(mock, request(mode: "form_post", scope: "openid")))
        XCTAssertEqual(plain.map(\.0), ["code", "state"])
    }

    // MARK: - The user JSON

    func testAuthorize_UserJSON_HoldsOnlyTheRequestedParts() async throws {
        let mock = try frozenClient()
        let nameOnly = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name"), user: "alice"))
        XCTAssertEqual(value("user", in: nameOnly), #"{"name":{"firstName":"Alice","lastName":"Appleseed"}}"#)
        let emailOnly = postedFields(try await signIn(mock, request(mode: "form_post", scope: "email"), user: "bob", email: "share"))
        XCTAssertEqual(value("user", in: emailOnly), #"{"email":"bob@example.com"}"#)

        let fresh = try frozenClient()
        let openIDOnly = postedFields(try await signIn(fresh, request(mode: "form_post", scope: "openid"), user: "alice"))
        XCTAssertEqual(openIDOnly.map(\.0), ["code", "state"], "no name or email requested: no user field")
    }

    func testAuthorize_UserJSON_EditedNameOnConsentPageWins_EmptyKeepsTheAccountName() async throws {
        let mock = try frozenClient()
        let edited = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name"), user: "alice", givenName: "Ally", familyName: "Seed"))
        XCTAssertEqual(value("user", in: edited), #"{"name":{"firstName":"Ally","lastName":"Seed"}}"#)
        let blank = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name"), user: "bob", givenName: "", familyName: ""))
        XCTAssertEqual(value("user", in: blank), #"{"name":{"firstName":"Bob","lastName":"Bobson"}}"#)
    }

    func testAuthorize_UserJSON_OnFirstAuthorizationOnly_AndAgainAfterRevoke() async throws {
        let mock = try frozenClient()
        let first = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name email")))
        XCTAssertNotNil(value("user", in: first))
        let second = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name email")))
        XCTAssertEqual(second.map(\.0), ["code", "state"], "second login: no user JSON")

        let tokens = try assertTokenAnswer(try await mock.redeem(try XCTUnwrap(value("code", in: second))),
                                           keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let revoked = try await mock.revoke(try XCTUnwrap(tokens["refresh_token"]?.stringValue))
        XCTAssertEqual(revoked.status, 200)

        let third = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name email")))
        XCTAssertEqual(third.map(\.0), ["code", "state", "user"])
        XCTAssertEqual(value("user", in: third), #"{"name":{"firstName":"Alice","lastName":"Appleseed"},"email":"alice@example.com"}"#)
    }

    // MARK: - Hide My Email

    func testAuthorize_HideMyEmail_GivesRelayAddressAndPrivateClaim_ShareGivesNeither() async throws {
        let mock = try frozenClient()
        let hidden = postedFields(try await signIn(mock, request(mode: "form_post", type: "code id_token", scope: "name email"), user: "alice", email: "hide"))
        let userJSON = try jsonObject(Array(try XCTUnwrap(value("user", in: hidden)).utf8))
        let relay = try XCTUnwrap(userJSON["email"]?.stringValue)
        XCTAssertTrue(matches(relay, relayPattern), relay)
        XCTAssertEqual(relay, Identity.relayAddress(teamID: "MOCKTEAM01", userID: "alice"))
        let claims = try await mock.verifiedClaims(value("id_token", in: hidden))
        XCTAssertEqual(claims["email"], .string(relay))
        XCTAssertEqual(claims["is_private_email"], true)
        XCTAssertEqual(claims["email_verified"], true)
        // The token endpoint agrees.
        let tokens = try assertTokenAnswer(try await mock.redeem(try XCTUnwrap(value("code", in: hidden))),
                                           keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let exchanged = try await mock.verifiedClaims(tokens["id_token"]?.stringValue)
        XCTAssertEqual(exchanged["email"], .string(relay))
        XCTAssertEqual(exchanged["is_private_email"], true)

        // Twin: bob, who hides by default, shares this time.
        let shared = postedFields(try await signIn(mock, request(mode: "form_post", type: "code id_token", scope: "name email"), user: "bob", email: "share"))
        XCTAssertEqual(try jsonObject(Array(try XCTUnwrap(value("user", in: shared)).utf8))["email"], "bob@example.com")
        let sharedClaims = try await mock.verifiedClaims(value("id_token", in: shared))
        XCTAssertEqual(sharedClaims["email"], "bob@example.com")
        XCTAssertNil(sharedClaims["is_private_email"])
    }

    func testAuthorize_EmailChoiceAccount_FollowsTheUsersOwnSetting() async throws {
        let mock = try frozenClient()
        let bob = postedFields(try await signIn(mock, request(mode: "form_post", scope: "email"), user: "bob", email: "account"))
        XCTAssertEqual(value("user", in: bob), #"{"email":"\#(Identity.relayAddress(teamID: "MOCKTEAM01", userID: "bob"))"}"#)
        let alice = postedFields(try await signIn(mock, request(mode: "form_post", scope: "email"), user: "alice", email: "account"))
        XCTAssertEqual(value("user", in: alice), #"{"email":"alice@example.com"}"#)
    }

    // MARK: - App group consent

    func testAuthorize_ConsentIsSharedByAppIDAndItsServicesID_NativeFirstThenWebHasNoUser() async throws {
        let mock = try frozenClient()
        let native = try await mock.nativeSignIn(user: "alice", clientID: "com.example.app")
        XCTAssertEqual(native.status, 200, native.text)
        XCTAssertEqual(try jsonObject(native.body)["email"], "alice@example.com", "the native sign-in was alice's first")
        let web = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name email"), user: "alice"))
        XCTAssertEqual(web.map(\.0), ["code", "state"], "consent already given through the App ID")

        // Twin: bob never used the app, so the web flow is his first authorization.
        let bob = postedFields(try await signIn(mock, request(mode: "form_post", scope: "name email"), user: "bob"))
        XCTAssertEqual(bob.map(\.0), ["code", "state", "user"])
    }

    // MARK: - Auto-approve

    func testAuthorize_AutoApprove_DeliversAtOnceOnGet() async throws {
        let mock = try frozenClient { $0.scenario.autoApprove = .init(user: "alice") }
        let response = try await mock.authorizePage(request(mode: "query"))
        XCTAssertEqual(response.status, 302)
        let location = try XCTUnwrap(response.headers["Location"])
        XCTAssertTrue(matches(location, #"^http://localhost:3000/callback\?code=c[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}&state=st-1$"#), location)
        let code = try XCTUnwrap(formPairs(String(location.split(separator: "?")[1])).first?.1)
        let tokens = try assertTokenAnswer(try await mock.redeem(code), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let claims = try await mock.verifiedClaims(tokens["id_token"]?.stringValue)["sub"]
        XCTAssertEqual(claims, .string(teamSub("alice")))

        // Twin: without auto-approve the same GET shows the consent page.
        let manual = try frozenClient()
        let page = try await manual.authorizePage(request(mode: "query"))
        XCTAssertEqual(page.status, 200)
        XCTAssertNil(page.headers["Location"])
    }
}
