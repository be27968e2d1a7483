@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// `response_mode=web_message` (docs/apple-behaviour.md §1.2 "web_message"): Sign in with Apple
/// JS's popup posts `JSON.stringify({method: "oauthDone", data})` to `window.opener`, for the
/// redirect URI's origin only; the redirect URI receives nothing. The request journal and the
/// dashboard show its sign-ins, cancels and refusals as they show form_post ones (issue 40 item 5).
final class WebMessageDeliveryTests: XCTestCase {
    private func request(type: String = "code id_token", scope: String? = "name email", state: String = "st-1",
                         mode: String = "web_message", redirectURI: String = webRedirect) -> [(String, String)] {
        var parameters = [("client_id", "com.example.web"), ("redirect_uri", redirectURI), ("response_type", type),
                          ("response_mode", mode), ("state", state), ("nonce", "n-1")]
        if let scope { parameters.append(("scope", scope)) }
        // What Apple's script adds; the mock takes and ignores them.
        parameters += [("frame_id", "0d3d1c5e-2b8a-4b7a-9a4e-1f2d3c4b5a69"), ("m", "12"), ("v", "1.5.5")]
        return parameters
    }

    /// GET then POST of the consent page with `user` (alice), Continue or Cancel.
    private func signIn(_ mock: any MockClient, _ parameters: [(String, String)], user: String = "alice",
                        action: String = "continue") async throws -> MockAnswer {
        let page = try await mock.authorizePage(parameters)
        XCTAssertEqual(page.status, 200, page.text)
        return try await mock.postForm("/auth/authorize", hiddenFields(page.text) + [("mock_user", user), ("mock_action", action)])
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
        // Without an opener: a window nothing opened (no referrer) loses the form; one a page opened
        // keeps it under the lost-opener notice (the browser tests run both).
        XCTAssertTrue(page.text.contains(#"var guarded = document.getElementById("consent")"#), page.text)
        XCTAssertTrue(page.text.contains(#"notice.textContent = "This page only works in the window Sign in with Apple JS opens.";"#), page.text)
        XCTAssertTrue(page.text.contains("Cross-Origin-Opener-Policy: same-origin loses its popups this way; same-origin-allow-popups keeps them"), page.text)
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

    // MARK: - The journal and the dashboard

    /// A journal entry of `/auth/authorize` or `/__mock/authorize` with the types of the events it caused.
    private typealias Journaled = (entry: JSONObject, events: [String])

    /// The journal's authorize entries (both routes), oldest first.
    private func authorizeEntries(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> [Journaled] {
        let feed = try jsonObject(try await mock.get("/__mock/events").body, file: file, line: line)
        var types: [Int64: String] = [:]
        for event in feed["events"]?.arrayValue?.compactMap(\.objectValue) ?? [] {
            if let sequence = event["sequence"]?.intValue { types[sequence] = event["type"]?.stringValue }
        }
        let answer = try await mock.get("/__mock/requests")
        XCTAssertEqual(answer.status, 200, answer.text, file: file, line: line)
        let entries = try XCTUnwrap(try jsonObject(answer.body)["requests"]?.arrayValue, file: file, line: line).compactMap(\.objectValue)
        return entries.filter { $0["route"] == "/auth/authorize" || $0["route"] == "/__mock/authorize" }.map { entry in
            (entry, (entry["events"]?.arrayValue ?? []).compactMap { $0.intValue.flatMap { types[$0] } })
        }
    }

    /// The response mode an authorize entry names: its form's, its query's or its JSON body's.
    private func mode(of entry: JSONObject) -> String? {
        if let mode = entry["form"]?.objectValue?["response_mode"] ?? entry["query"]?.objectValue?["response_mode"] { return mode.stringValue }
        guard let body = entry["body"]?.stringValue, let fields = try? JSONParser.parse(body).objectValue else { return nil }
        return fields["response_mode"]?.stringValue
    }

    /// What the journal shows of an entry, less what tells any two requests apart (number, times,
    /// sizes, `Content-Length`; event numbers become the events' types), the response mode (read
    /// by `mode(of:)`) and the user picked on the consent page.
    private func shown(_ journaled: Journaled) -> JSONObject {
        var shown = journaled.entry
        for key in ["id", "time", "microseconds", "response_bytes"] { shown[key] = nil }
        if shown["reason"]?.stringValue?.contains("is the same site as this mock") == true { shown["reason"] = .null }
        shown["events"] = .array(journaled.events.map(JSONValue.string))
        if var headers = shown["headers"]?.objectValue {
            headers["content-length"] = nil
            shown["headers"] = .object(headers)
        }
        for key in ["query", "form"] {
            guard var fields = shown[key]?.objectValue else { continue }
            fields["response_mode"] = nil
            fields["mock_user"] = nil
            fields["mock_page"] = nil  // each page's own value
            shown[key] = .object(fields)
        }
        if let body = shown["body"]?.stringValue, var fields = try? JSONParser.parse(body).objectValue {
            fields["response_mode"] = nil
            shown["body"] = .object(fields)
        }
        return shown
    }

    /// The dashboard's rows of authorize requests, oldest first, each without its number, its
    /// time and its events' numbers.
    private func dashboardRows(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> [String] {
        let fragment = try await mock.get("/__mock/dashboard")
        XCTAssertEqual(fragment.status, 200, fragment.text, file: file, line: line)
        return fragment.text.split(separator: "\n").map(String.init).filter { row in
            row.hasPrefix("<tr id=\"request-") && (row.contains(">/auth/authorize</span>") || row.contains(">/__mock/authorize</span>"))
        }.reversed().map { row in
            // The first form_post request of a client and return URL on the mock's own site carries the
            // same-site notice (SameSiteNotice); the tests below check where it appears.
            row.replacingOccurrences(of: #"request-[0-9]+|(?<=scope="row">)[0-9]+|<time[^<]*</time>|#[0-9]+|<span class="reason">[^<]*is the same site as this mock[^<]*</span>"#,
                                     with: "", options: .regularExpression)
        }
    }

    func testJournal_NamesApplesCodeOnlyForARefusalInApplesName_NotForABadControlRequest() async throws {
        let mock = try frozenClient()
        // Apple would refuse this sign-in (the redirect URI is not registered): Apple's code and why.
        expect(400, try await headless(mock, mode: "web_message", redirectURI: "https://evil.example.com/callback"))
        // Its twin: a control request the mock cannot read at all (no user) is its own refusal, not Apple's.
        let bad = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(otherWebRedirect)","response_type":"code"}"#)
        expect(400, bad)
        XCTAssertTrue(bad.text.contains(#""field":"user""#), bad.text)
        let entries = try await authorizeEntries(mock)
        guard entries.count == 2 else { return XCTFail("\(entries.count) entries, not 2") }
        XCTAssertEqual(entries[0].entry["error"], "invalid_request")
        XCTAssertNotEqual(entries[0].entry["reason"], .null)
        XCTAssertEqual(entries[1].entry["error"], .null)
        XCTAssertEqual(entries[1].entry["reason"], .null)
    }

    func testDashboard_ClipsAResponseModeTag_ThatTheClientMadeLong() async throws {
        let mock = try frozenClient()
        expect(400, try await mock.authorizePage(request(mode: String(repeating: "m", count: 500))))
        expect(400, try await mock.authorizePage(request(mode: String(repeating: "m", count: 40))))
        let rows = try await dashboardRows(mock)
        guard rows.count == 2 else { return XCTFail("\(rows.count) rows, not 2") }
        XCTAssertTrue(rows[0].contains(Self.modeTag(String(repeating: "m", count: 40) + "…")), rows[0])
        // Its twin, exactly at the limit, shows whole.
        XCTAssertTrue(rows[1].contains(Self.modeTag(String(repeating: "m", count: 40))), rows[1])
    }

    /// A dashboard row's tag naming a response mode.
    private static func modeTag(_ mode: String) -> String { #"<span class="tag">\#(mode)</span>"# }

    /// `POST /__mock/authorize` of alice to `redirectURI` in `mode`.
    private func headless(_ mock: any MockClient, mode: String, redirectURI: String = otherWebRedirect) async throws -> MockAnswer {
        try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(redirectURI)","response_type":"code","response_mode":"\#(mode)","state":"s1","user":"alice"}"#)
    }

    /// Fails the test unless `answer` has `status`.
    private func expect(_ status: Int, _ answer: MockAnswer, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(answer.status, status, answer.text, file: file, line: line)
    }

    func testJournal_ShowsAWebMessageSignInAsAFormPostOne_NamingItsResponseMode() async throws {
        let mock = try frozenClient()
        expect(200, try await signIn(mock, request(mode: "form_post")))
        _ = try posted(try await signIn(mock, request(), user: "bob"))
        expect(200, try await headless(mock, mode: "form_post"))
        expect(200, try await headless(mock, mode: "web_message"))

        let entries = try await authorizeEntries(mock)
        XCTAssertEqual(entries.map { "\($0.entry["method"]?.stringValue ?? "-") \($0.entry["path"]?.stringValue ?? "-") \(mode(of: $0.entry) ?? "-")" },
                       ["GET /auth/authorize form_post", "POST /auth/authorize form_post", "GET /auth/authorize web_message",
                        "POST /auth/authorize web_message", "POST /__mock/authorize form_post", "POST /__mock/authorize web_message"])
        XCTAssertEqual(entries.map(\.events), [[], ["consent-granted", "code-issued"], [], ["consent-granted", "code-issued"], ["code-issued"], ["code-issued"]])
        // The same-site notice: on the first form_post page only (localhost, as the callback), never for web_message.
        XCTAssertEqual(entries.map { $0.entry["reason"]?.stringValue?.contains("is the same site as this mock") == true },
                       [true, false, false, false, false, false])
        let rows = try await dashboardRows(mock)
        guard entries.count == 6, rows.count == 6 else { return XCTFail("\(entries.count) entries and \(rows.count) rows, not 6 of each") }
        XCTAssertEqual(entries[3].entry["status"]?.intValue, 200)
        XCTAssertEqual(entries[3].entry["client_id"], "com.example.web")
        XCTAssertEqual(entries[3].entry["error"], .null)
        XCTAssertEqual(entries[5].entry["control"], true)
        XCTAssertTrue(rows[3].contains(#"<span class="tag ok">200</span>"#), rows[3])
        XCTAssertTrue(rows[3].contains(#"<span class="event"><span class="dim"></span> consent-granted</span>, <span class="event"><span class="dim"></span> code-issued</span>"#), rows[3])
        // Each web_message request shows exactly as its form_post twin, in the journal and on the dashboard.
        for (formPost, webMessage) in [(0, 2), (1, 3), (4, 5)] {
            XCTAssertEqual(shown(entries[webMessage]), shown(entries[formPost]), "journal entry \(webMessage + 1) against \(formPost + 1)")
            // The same row but for the response mode it names, as /auth/token rows name their grant_type.
            XCTAssertTrue(rows[webMessage].contains(Self.modeTag("web_message")), rows[webMessage])
            XCTAssertTrue(rows[formPost].contains(Self.modeTag("form_post")), rows[formPost])
            XCTAssertEqual(rows[webMessage].replacingOccurrences(of: Self.modeTag("web_message"), with: Self.modeTag("form_post")), rows[formPost],
                           "dashboard row \(webMessage + 1) against \(formPost + 1)")
        }
    }

    func testJournal_ShowsAWebMessageCancelOrRefusalAsAFormPostOne_AndAnUnknownModeAsRefused() async throws {
        let mock = try frozenClient()
        let unregistered = "https://evil.example.com/callback"
        expect(200, try await signIn(mock, request(mode: "form_post"), action: "cancel"))
        let cancelled = try posted(try await signIn(mock, request(), action: "cancel"))
        XCTAssertEqual(cancelled.message, #"{"method":"oauthDone","data":{"error":"user_cancelled_authorize"}}"#)
        expect(400, try await mock.authorizePage(request(mode: "form_post", redirectURI: unregistered)))
        expect(400, try await mock.authorizePage(request(redirectURI: unregistered)))
        expect(400, try await headless(mock, mode: "form_post", redirectURI: unregistered))
        expect(400, try await headless(mock, mode: "web_message", redirectURI: unregistered))
        expect(400, try await mock.authorizePage(request(mode: "web_msg")))

        let entries = try await authorizeEntries(mock)
        XCTAssertEqual(entries.map { mode(of: $0.entry) ?? "-" },
                       ["form_post", "form_post", "web_message", "web_message", "form_post", "web_message", "form_post", "web_message", "web_msg"])
        XCTAssertEqual(entries.map(\.events), Array(repeating: [], count: 9), "a cancel or a refusal changes nothing")
        let rows = try await dashboardRows(mock)
        guard entries.count == 9, rows.count == 9 else { return XCTFail("\(entries.count) entries and \(rows.count) rows, not 9 of each") }
        XCTAssertEqual(entries[3].entry["status"]?.intValue, 200, "a cancel is delivered, not refused")
        XCTAssertEqual(entries[3].entry["error"], .null)
        XCTAssertEqual(entries[5].entry["error"], "invalid_request")
        XCTAssertEqual(entries[5].entry["reason"]?.stringValue?.hasPrefix("redirect_uri \(unregistered) is not registered for com.example.web"), true)
        // A headless refusal names what Apple's endpoint would have refused with, and why.
        XCTAssertEqual(entries[7].entry["error"], "invalid_request")
        XCTAssertEqual(entries[7].entry["reason"]?.stringValue?.hasPrefix("redirect_uri \(unregistered) is not registered for com.example.web"), true)
        for (formPost, webMessage) in [(0, 2), (1, 3), (4, 5), (6, 7)] {
            XCTAssertEqual(shown(entries[webMessage]), shown(entries[formPost]), "journal entry \(webMessage + 1) against \(formPost + 1)")
            // The same row but for the response mode it names, as /auth/token rows name their grant_type.
            XCTAssertTrue(rows[webMessage].contains(Self.modeTag("web_message")), rows[webMessage])
            XCTAssertTrue(rows[formPost].contains(Self.modeTag("form_post")), rows[formPost])
            XCTAssertEqual(rows[webMessage].replacingOccurrences(of: Self.modeTag("web_message"), with: Self.modeTag("form_post")), rows[formPost],
                           "dashboard row \(webMessage + 1) against \(formPost + 1)")
        }
        // The twin of the accepted mode: an unknown one is refused, and the journal and the dashboard say why.
        let reason = "response_mode web_msg is not query, fragment, form_post or web_message"
        XCTAssertEqual(entries[8].entry["status"]?.intValue, 400)
        XCTAssertEqual(entries[8].entry["error"], "invalid_request")
        XCTAssertEqual(entries[8].entry["reason"]?.stringValue, reason)
        XCTAssertTrue(rows[8].contains(#"<span class="tag warn">400</span></td><td><span class="mono error">invalid_request</span> <span class="reason">\#(reason)</span>"#),
                      rows[8])
        XCTAssertTrue(rows[8].contains(Self.modeTag("web_msg")), "the mode as sent: \(rows[8])")
    }
}
