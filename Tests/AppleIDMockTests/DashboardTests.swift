@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// The dashboard at `/__mock/` on a live mock over raw sockets: the static page and its assets
/// with their security headers, the data fragment's sections and the control API calls its
/// buttons carry, escaping of every value a user, a scenario or a request controls, the
/// requests filters, the guard (token, Host, Origin) and the rendering bounds.
final class DashboardTests: XCTestCase {
    private static let policy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    private static let token = "dashboard-token-for-tests_0123456789"

    // MARK: - Factories

    /// `GET target` with extra headers.
    private func get(_ server: AppleIDMockServer, _ target: String, headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try server.client().roundTrip("GET", target, headers: headers)
    }

    /// The data fragment (failing the test unless 200).
    private func fragment(_ server: AppleIDMockServer, _ query: String = "", headers: [(String, String)] = [],
                          file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let response = try get(server, "/__mock/dashboard" + query, headers: headers)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return response.text
    }

    /// The attributes of the button named `test` (`data-test`), unescaped; nil when there is none.
    private func button(_ html: String, _ test: String) -> [String: String]? {
        guard let mark = html.range(of: "data-test=\"\(HTML.escape(test))\""),
              let start = html[..<mark.lowerBound].range(of: "<button", options: .backwards),
              let end = html[mark.upperBound...].firstIndex(of: ">") else { return nil }
        let tag = String(html[start.upperBound..<end])
        let regex = try! NSRegularExpression(pattern: #"([a-z-]+)=(?:"([^"]*)"|'([^']*)')"#)
        var attributes: [String: String] = [:]
        for match in regex.matches(in: tag, range: NSRange(tag.startIndex..., in: tag)) {
            let value = Range(match.range(at: 2), in: tag) ?? Range(match.range(at: 3), in: tag)!
            attributes[String(tag[Range(match.range(at: 1), in: tag)!])] = htmlUnescape(String(tag[value]))
        }
        return attributes
    }

    /// Presses a button as the page's script does: its method and path, its body as JSON.
    private func press(_ server: AppleIDMockServer, _ attributes: [String: String]) throws -> RawHTTPResponse {
        let body = attributes["data-body"]
        return try server.client().roundTrip(try XCTUnwrap(attributes["data-method"]), try XCTUnwrap(attributes["data-path"]),
                                             headers: body == nil ? [] : [("Content-Type", "application/json")], body: Array((body ?? "").utf8))
    }

    /// How often `needle` occurs in `text`.
    private func occurrences(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// A request written byte by byte with this `Host` and optional `Origin`.
    private func send(_ server: AppleIDMockServer, _ method: String, _ path: String, host: String, origin: String? = nil,
                      contentType: String? = nil, body: String = "") throws -> RawHTTPResponse {
        let client = try server.client()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        if let origin { head += "Origin: \(origin)\r\n" }
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if method == "POST" || !body.isEmpty { head += "Content-Length: \(body.utf8.count)\r\n" }
        try client.send(head + "\r\n" + body)
        return try client.readResponse()
    }

    // MARK: - The page and its assets

    func testDashboardShell_IsStaticHTMLWithItsSecurityHeaders_AndHoldsNoState() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let before = try get(server, "/__mock/")
        XCTAssertEqual(before.status, 200)
        XCTAssertEqual(before.headers["Content-Type"], "text/html; charset=utf-8")
        XCTAssertEqual(before.headers["Content-Security-Policy"], Self.policy)
        XCTAssertEqual(before.headers["X-Content-Type-Options"], "nosniff")
        XCTAssertEqual(before.headers["Cache-Control"], "no-store")
        XCTAssertEqual(before.headers["X-Frame-Options"], "DENY")
        XCTAssertTrue(before.text.hasPrefix("<!DOCTYPE html>"))
        XCTAssertTrue(before.text.contains(#"<link rel="stylesheet" href="/__mock/dashboard.css">"#))
        XCTAssertTrue(before.text.contains(#"<script src="/__mock/dashboard.js" defer></script>"#))
        XCTAssertTrue(before.text.contains(#"<form id="token-form" class="card token" hidden>"#), "the token form starts hidden")
        for slot in ["users", "keys", "clock", "notifications", "requests", "mail", "events"] {
            XCTAssertTrue(before.text.contains("<section id=\"\(slot)\""), slot)
            XCTAssertTrue(before.text.contains("<div data-slot=\"\(slot)\""), slot)
        }
        // No inline script or style: the policy would refuse them.
        XCTAssertEqual(occurrences("<script", in: before.text), 1)
        XCTAssertFalse(before.text.contains("<style"))
        XCTAssertFalse(before.text.contains(" style="))
        XCTAssertFalse(before.text.contains(" onclick="))
        // The twin: after a sign-in the page is the same bytes; the state is in the data.
        _ = try server.nativeSignIn()
        XCTAssertEqual(try get(server, "/__mock/").body, before.body)
        XCTAssertFalse(before.text.contains("alice"))
    }

    func testDashboardAssets_AreServedWithTheirTypes_AndANeighbourPathIsNoRoute() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let script = try get(server, "/__mock/dashboard.js")
        XCTAssertEqual(script.status, 200)
        XCTAssertEqual(script.headers["Content-Type"], "text/javascript; charset=utf-8")
        XCTAssertEqual(script.headers["X-Content-Type-Options"], "nosniff")
        XCTAssertEqual(script.headers["Cache-Control"], "no-cache")
        XCTAssertTrue(script.text.hasPrefix("\"use strict\";"))
        XCTAssertTrue(script.text.contains("sessionStorage"))
        let style = try get(server, "/__mock/dashboard.css")
        XCTAssertEqual(style.status, 200)
        XCTAssertEqual(style.headers["Content-Type"], "text/css; charset=utf-8")
        XCTAssertTrue(style.text.contains(".grid"))
        let redirect = try get(server, "/__mock")
        XCTAssertEqual(redirect.status, 302)
        XCTAssertEqual(redirect.headers["Location"], "/__mock/")
        // The twins: near misses are the control API's 404 and 405, not a second fallback.
        let missing = try get(server, "/__mock/dashboard.jsx")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.headers["Content-Type"], "application/json")
        XCTAssertEqual(try server.client().roundTrip("POST", "/__mock/", headers: [("Content-Type", "application/json")], body: Array("{}".utf8)).status, 405)
        XCTAssertEqual(try server.client().roundTrip("DELETE", "/__mock/dashboard").status, 405)
    }

    // MARK: - The data

    func testDashboardData_ShowsAConsent_AndItsRevokeButtonCallsTheControlAPI() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "alice").status, 200)
        let response = try get(server, "/__mock/dashboard")
        XCTAssertEqual(response.headers["Content-Type"], "text/html; charset=utf-8")
        XCTAssertEqual(response.headers["Content-Security-Policy"], Self.policy)
        XCTAssertEqual(response.headers["Cache-Control"], "no-store")
        let html = response.text
        XCTAssertTrue(html.hasPrefix(#"<div data-slot="meta" data-last-event="2" data-journal="on" data-newest-request="#), html)
        XCTAssertTrue(html.contains(#"<span class="mono strong">com.example.app</span> <span class="tag ok">granted</span> <time data-at="1700000000">2023-11-14T22:13:20Z</time><br><span class="dim">scopes</span> email name · email shared"#))
        XCTAssertTrue(html.contains(teamSub("alice")))
        XCTAssertTrue(html.contains(#"<span class="mono">com.example.web</span> <span class="tag ok">authorized</span>"#))
        let revoke = try XCTUnwrap(button(html, "revoke-alice-com.example.app"))
        XCTAssertEqual(revoke["data-method"], "POST")
        XCTAssertEqual(revoke["data-path"], "/__mock/events")
        XCTAssertEqual(revoke["data-body"], #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        // The twin: bob never signed in, so he has no consent and no revoke button.
        XCTAssertNil(button(html, "revoke-bob-com.example.app"))
        XCTAssertNotNil(button(html, "delete-bob"))

        let pressed = try press(server, revoke)
        XCTAssertEqual(pressed.status, 202, pressed.text)
        let after = try fragment(server)
        XCTAssertNil(button(after, "revoke-alice-com.example.app"))
        XCTAssertTrue(after.contains(#"<span class="mono strong">com.example.app</span> <span class="tag bad">revoked by the user</span>"#))
        XCTAssertTrue(after.contains(#"<span class="mono">com.example.app</span> <span class="tag bad">revoked</span>"#))
        XCTAssertTrue(after.contains(#"\#n<tbody id="notification-1"><tr data-test="attempt-1-1">"#))
        XCTAssertTrue(after.contains(#"<span class="tag">consent-revoked</span>"#))
    }

    func testDashboardData_OffersRelayForwardingOnlyForAConsentThatHidesTheEmail() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob", hideEmail: true).status, 200)
        XCTAssertEqual(try server.nativeSignIn(user: "alice", hideEmail: false).status, 200)
        let html = try fragment(server)
        XCTAssertTrue(html.contains("email hidden"))
        let stop = try XCTUnwrap(button(html, "relay-off-bob-com.example.app"))
        XCTAssertEqual(stop["data-body"], #"{"type":"email-disabled","user":"bob","client_id":"com.example.app"}"#)
        XCTAssertEqual(try press(server, stop).status, 202)
        let after = try fragment(server)
        XCTAssertTrue(try XCTUnwrap(capture(#"(<tr id="user-bob">.*?</tr>)"#, in: after)).contains(#"<span class="tag warn">relay off</span>"#))
        XCTAssertEqual(button(after, "relay-on-bob-com.example.app")?["data-body"], #"{"type":"email-enabled","user":"bob","client_id":"com.example.app"}"#)
        XCTAssertNil(button(after, "relay-off-bob-com.example.app"))
        // The twin: alice shared her email, so she has no relay forwarding to stop.
        XCTAssertNil(button(after, "relay-off-alice-com.example.app"))
        XCTAssertTrue(try XCTUnwrap(capture(#"(<tr id="user-alice">.*?</tr>)"#, in: after)).contains(#"<span class="tag ok">forwarding</span>"#))
    }

    func testDashboardData_ShowsEachDeliveryAttemptWithTheReceiversAnswer_AndTheDecodedClaims() throws {
        let receiver = RecordingTransport(status: 200)
        let server = try startFrozenMock { configuration in
            configuration.scenario.teams[0].notificationURL = "https://backend.example/apple/notifications"
            configuration.notificationTransport = receiver
        }
        defer { server.stop() }
        _ = try server.nativeSignIn(user: "alice")
        let id = try XCTUnwrap(try server.postEvent("consent-revoked", user: "alice"))
        let settled = server.notifications.records().first { $0.id == id && $0.isSettled }
        if settled == nil {
            let exp = expectation(description: "settled")
            Task { _ = await server.notifications.await(after: id - 1, seconds: 10); exp.fulfill() }
            wait(for: [exp], timeout: 15)
        }
        let html = try fragment(server)
        let row = try XCTUnwrap(capture(#"(<tr data-test="attempt-1-1">.*?</tr>)"#, in: html))
        XCTAssertTrue(row.contains(#"<td class="mono url">https://backend.example/apple/notifications</td>"#), row)
        XCTAssertTrue(row.contains(#"<span class="tag ok">200</span>"#), row)
        XCTAssertTrue(row.contains(#"<span class="tag ok">delivered</span>"#), row)
        XCTAssertTrue(row.contains(#"<time data-at="1700000000">2023-11-14T22:13:20Z</time>"#), row)
        XCTAssertTrue(row.contains(#"<dt>events</dt><dd><span class="dim">a JSON string:</span><dl><dt>type</dt><dd><code>consent-revoked</code></dd>"#),
                      "the events claim is shown decoded")
        XCTAssertTrue(row.contains(#"<dt>aud</dt><dd><code>com.example.app</code></dd>"#))
        XCTAssertTrue(row.contains(#"<dt>iat</dt><dd><code>1700000000</code> <span class="dim">2023-11-14T22:13:20Z</span></dd>"#))
        XCTAssertTrue(row.contains(#"<p class="dim">RS256, kid W2ek7HdPaL</p>"#))
        // The twin: one attempt, one row.
        XCTAssertNil(capture(#"(<tr data-test="attempt-1-2">)"#, in: html))
    }

    func testDashboardData_EscapesHostileNamesEmailsURLsAndFilters() throws {
        let receiver = RecordingTransport(status: 200)
        let hostileURL = #"https://backend.example/<script>alert(3)</script>?a="b'&c"#
        let server = try startFrozenMock { configuration in
            configuration.scenario.teams[0].notificationURL = hostileURL
            configuration.notificationTransport = receiver
        }
        defer { server.stop() }
        let user = #"{"id":"mallory","email":"\"><img/src=x/onerror=alert(2)>@evil.example","given_name":"<script>alert(1)</script>","family_name":"\"\u0301 onfocus=alert(4) autofocus x=\""}"#
        XCTAssertEqual(try server.postJSON("/__mock/users", user).status, 201)
        _ = try server.nativeSignIn(user: "mallory")
        try server.postEvent("consent-revoked", user: "mallory")
        let html = try fragment(server, "?route=%2F%3Cscript%3E&client=%3Cb%3E")
        XCTAssertTrue(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        XCTAssertTrue(html.contains("&quot;&gt;&lt;img/src=x/onerror=alert(2)&gt;@evil.example"))
        XCTAssertTrue(html.contains("https://backend.example/&lt;script&gt;alert(3)&lt;/script&gt;?a=&quot;b&#39;&amp;c"))
        XCTAssertTrue(html.contains("&quot;\u{301} onfocus=alert(4) autofocus x=&quot;"), "a quote before a combining mark is escaped too")
        XCTAssertTrue(html.contains("no request to /&lt;script&gt; from &lt;b&gt;"))
        for raw in ["<script", "<img", "\"\u{301}", "'&c", "<b>"] {
            XCTAssertFalse(html.contains(raw), "unescaped \(raw)")
        }
        // The twin: the same values unhostile appear as they are.
        XCTAssertTrue(html.contains("mallory"))
    }

    func testDashboardData_StartsALineOnlyWithASlotOrARow_EvenWhenAValueHoldsLineBreaks() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let user = #"{"id":"newline","email":"n@example.com","given_name":"A\n<tr id=\"user-alice\">","family_name":"B\r\n</tbody>"}"#
        XCTAssertEqual(try server.postJSON("/__mock/users", user).status, 201)
        _ = try server.nativeSignIn(user: "newline")
        let html = try fragment(server)
        let lines = html.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines where !line.isEmpty {
            XCTAssertTrue(["<div data-slot=\"", "<tr id=\"", "<tbody id=\"", "</tbody></table>", "</table></div>"].contains { line.hasPrefix($0) },
                          String(line.prefix(80)))
        }
        XCTAssertEqual(lines.filter { $0.hasPrefix(#"<tr id="user-"#) }.count, 4, "alice, bob, carol and newline, one line each")
        XCTAssertTrue(html.contains("A&#10;&lt;tr id=&quot;user-alice&quot;&gt; B&#13;&#10;&lt;/tbody&gt;"))
        // The twin: the same value without line breaks reads as it is.
        XCTAssertTrue(html.contains(#"<tr id="user-alice">"#))
    }

    func testHTMLEscape_EscapesAQuoteFollowedByACombiningMark() {
        // Swift sees `"` + U+0301 as one Character; a browser sees a quote that ends the attribute.
        XCTAssertEqual(HTML.escape("x\"\u{301} onfocus=alert(1)"), "x&quot;\u{301} onfocus=alert(1)")
        XCTAssertEqual(HTML.escape("<\u{301}b>&'\""), "&lt;\u{301}b&gt;&amp;&#39;&quot;")
        XCTAssertEqual(HTML.escape("a\r\nb"), "a&#13;&#10;b", "line breaks read the same as references")
        // The twin: text with nothing to escape comes back unchanged, multi-byte characters included.
        XCTAssertEqual(HTML.escape("Zoë 🍏 façade"), "Zoë 🍏 façade")
    }

    func testDashboardData_FiltersRequestsByRouteAndClient_AndRefusesABadFilter() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        XCTAssertEqual(try server.postForm("/auth/token", [("client_id", "com.example.web"), ("grant_type", "refresh_token")]).status, 400)
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200)
        let all = try fragment(server)
        XCTAssertTrue(all.contains(#"<span class="method">GET</span> <span class="mono">/auth/keys</span>"#))
        XCTAssertTrue(all.contains(#"<span class="method">POST</span> <span class="mono">/auth/token</span>"#))
        let token = try fragment(server, "?route=/auth/token")
        XCTAssertTrue(token.contains(#"<span class="method">POST</span> <span class="mono">/auth/token</span>"#))
        XCTAssertTrue(token.contains(#"<span class="mono error">invalid_client</span>"#), "why Apple refused it")
        XCTAssertFalse(token.contains(#"<span class="mono">/auth/keys</span>"#))
        XCTAssertTrue(token.contains("newest 1 to /auth/token"))
        let client = try fragment(server, "?client=com.example.app")
        XCTAssertTrue(client.contains(#"<span class="mono">/__mock/sign-in</span>"#))
        XCTAssertTrue(client.contains(#"<span class="event"><span class="dim">#1</span> consent-granted</span>, <span class="event"><span class="dim">#2</span> code-issued</span>"#),
                      "the events it caused")
        XCTAssertFalse(client.contains(#"<span class="mono">/auth/token</span>"#))
        let template = try fragment(server, "?route=" + "/__mock/keys/{kid}".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        XCTAssertTrue(template.contains("no request to /__mock/keys/{kid}"))
        // The twins: a bad filter is a 400 naming it.
        let longest = "/" + String(repeating: "a", count: 511)
        XCTAssertEqual(try get(server, "/__mock/dashboard?route=" + longest).status, 200)
        for (query, field) in [("?route=auth", "route"), ("?client=", nil), ("?user=alice", "user"), ("?route=/a&route=/b", "route"),
                               ("?route=" + longest + "a", "route"), ("?client=" + String(repeating: "c", count: 257), "client")] {
            let response = try get(server, "/__mock/dashboard" + query)
            if let field {
                XCTAssertEqual(response.status, 400, query)
                XCTAssertEqual(try jsonObject(response.body)["field"], .string(field), query)
            } else {
                XCTAssertEqual(response.status, 200, "an empty filter is no filter")
            }
        }
    }

    func testDashboardData_LeavesOutTheDashboardsOwnRequests_ButNotTheSameRequestFromElsewhere() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        _ = try get(server, "/__mock/")
        _ = try get(server, "/__mock/dashboard.js")
        _ = try fragment(server)
        _ = try get(server, "/__mock/events?after=0", headers: [("X-AppleID-Mock-Dashboard", "1")])
        _ = try get(server, "/__mock/clock")
        let html = try fragment(server)
        XCTAssertTrue(html.contains(#"<span class="mono">/__mock/clock</span>"#))
        XCTAssertFalse(html.contains(#"<span class="mono">/__mock/events</span>"#))
        XCTAssertFalse(html.contains(#"<span class="mono">/__mock/dashboard</span>"#))
        XCTAssertFalse(html.contains(#"<span class="mono">/__mock/</span>"#))
        // The twin: the feed read by a test (no mark) is listed.
        _ = try get(server, "/__mock/events?after=0")
        XCTAssertTrue(try fragment(server).contains(#"<span class="mono">/__mock/events</span>"#))
    }

    func testDashboardData_ShowsKeysAndClockWithTheirActions() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let html = try fragment(server)
        XCTAssertTrue(html.contains("3 published at /auth/keys, 0 retired · signing: W2ek7HdPaL"))
        XCTAssertEqual(button(html, "rotate")?["data-path"], "/__mock/keys/rotate")
        XCTAssertEqual(button(html, "activate-Ymq4vB9xTz")?["data-path"], "/__mock/keys/Ymq4vB9xTz/activate")
        XCTAssertEqual(button(html, "retire-Ymq4vB9xTz")?["data-method"], "DELETE")
        XCTAssertEqual(button(html, "retire-Ymq4vB9xTz")?["data-path"], "/__mock/keys/Ymq4vB9xTz")
        XCTAssertNil(button(html, "retire-W2ek7HdPaL"), "the signing key cannot be retired")
        XCTAssertTrue(html.contains(#"<time id="mock-now" class="now mono" data-epoch="1700000000" data-frozen="true" datetime="2023-11-14T22:13:20Z">2023-11-14T22:13:20Z</time> <span class="tag warn">frozen</span> <span class="dim">epoch</span> <span class="mono" id="mock-epoch">1700000000</span>"#))
        let unfreeze = try XCTUnwrap(button(html, "unfreeze"))
        XCTAssertEqual(unfreeze["data-body"], #"{"freeze":false}"#)
        XCTAssertNil(button(html, "freeze"))
        XCTAssertEqual(try press(server, try XCTUnwrap(button(html, "activate-Ymq4vB9xTz"))).status, 200)
        XCTAssertEqual(try server.postJSON("/__mock/clock", #"{"advance":3600}"#).status, 200)
        let after = try fragment(server)
        XCTAssertTrue(after.contains("signing: Ymq4vB9xTz"))
        XCTAssertTrue(after.contains(#"datetime="2023-11-14T23:13:20Z">2023-11-14T23:13:20Z</time> <span class="tag warn">frozen</span>"#))
        XCTAssertTrue(after.contains(#"\#n<tr id="key-W2ek7HdPaL"><th scope="row" class="mono">W2ek7HdPaL</th><td><span class="tag">published</span></td><td><time data-at="1700000000">"#),
                      "the key published at the start, no longer signing")
        // The twin: the fragment holds no relative time, so it changes only with the state.
        XCTAssertFalse(after.contains(" ago"))
    }

    func testDashboardData_ListsAtMost2000Users_AndTheNewest100Notifications() throws {
        let server = try startFrozenMock { configuration in
            configuration.notificationTransport = RecordingTransport()
            configuration.scenario.teams[0].notificationURL = "https://backend.example/apple"
        }
        defer { server.stop() }
        for index in 0..<2010 {
            _ = try server.domain.addUser(Scenario.User(id: "u\(index)", email: "u\(index)@example.com", givenName: "U", familyName: "\(index)",
                                                        hideEmail: false, realUserStatus: 2))
        }
        _ = try server.nativeSignIn(user: "bob", hideEmail: true)
        for round in 0..<120 {
            try server.postEvent(round.isMultiple(of: 2) ? "email-disabled" : "email-enabled", user: "bob")
        }
        let html = try fragment(server)
        XCTAssertTrue(html.contains(#"<div data-slot="users-summary">showing 2,000 of 2,013 users</div>"#))
        XCTAssertEqual(occurrences("<tr id=\"user-", in: html), 2000)
        XCTAssertTrue(html.contains(#"<tr id="user-u1996">"#))
        XCTAssertFalse(html.contains(#"<tr id="user-u1997">"#), "the 2,001st user is not listed")
        XCTAssertEqual(occurrences("<tbody id=\"notification-", in: html), 100)
        XCTAssertTrue(html.contains(#"<tbody id="notification-120""#))
        XCTAssertFalse(html.contains(#"<tbody id="notification-20""#), "the 101st newest is not listed")
        XCTAssertEqual(occurrences("<tr id=\"event-", in: html), 100)
        // The twin: below the bound, every user and "N users".
        let small = try startFrozenMock()
        defer { small.stop() }
        XCTAssertTrue(try fragment(small).contains(#"<div data-slot="users-summary">3 users</div>"#))
    }

    // MARK: - The guard

    func testControlToken_GuardsTheData_ButNotThePageItsAssetsOrAppleRoutes() throws {
        let server = try startFrozenMock { $0.controlToken = Self.token }
        defer { server.stop() }
        let refused = try get(server, "/__mock/dashboard")
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(refused.headers["WWW-Authenticate"], #"Bearer realm="appleid-mock""#)
        XCTAssertEqual(try get(server, "/__mock/dashboard", headers: [("Authorization", "Bearer wrong-token-for-tests_012345678")]).status, 401)
        let allowed = try get(server, "/__mock/dashboard", headers: [("Authorization", "Bearer \(Self.token)")])
        XCTAssertEqual(allowed.status, 200)
        XCTAssertTrue(allowed.text.contains("<tr id=\"user-alice\">"))
        for path in ["/__mock/", "/__mock/dashboard.js", "/__mock/dashboard.css"] {
            XCTAssertEqual(try get(server, path).status, 200, path)
        }
        XCTAssertEqual(try get(server, "/__mock").status, 302)
        XCTAssertEqual(try get(server, "/auth/keys").status, 200)
        // The twins: the page's actions still need the token.
        XCTAssertEqual(try server.postJSON("/__mock/reset", "{}").status, 401)
        XCTAssertEqual(try server.client().roundTrip("POST", "/__mock/reset", headers: [("Content-Type", "application/json"),
                                                                                        ("Authorization", "Bearer \(Self.token)")]).status, 200)
    }

    func testControlGuard_RefusesTheDashboardUnderAnotherHost_AndCrossOriginActions() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        for path in ["/__mock/", "/__mock/dashboard", "/__mock/dashboard.js"] {
            let refused = try send(server, "GET", path, host: "evil.example:\(server.port)")
            XCTAssertEqual(refused.status, 403, path)
            XCTAssertEqual(try jsonObject(refused.body)["field"], "Host", path)
        }
        let crossOrigin = try send(server, "POST", "/__mock/reset", host: "127.0.0.1:\(server.port)", origin: "http://evil.example",
                                   contentType: "application/json", body: "{}")
        XCTAssertEqual(crossOrigin.status, 403)
        XCTAssertEqual(try jsonObject(crossOrigin.body)["field"], "Origin")
        // A form post from another site: text/plain, no preflight. Refused for its Origin first.
        let form = try send(server, "POST", "/__mock/events", host: "127.0.0.1:\(server.port)", origin: "http://evil.example",
                            contentType: "text/plain", body: #"{"type":"account-delete","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(form.status, 403)
        XCTAssertEqual(server.domain.user("alice")?.deleted, false)
        // The twins: the page's own origin is taken, and its own JSON.
        let sameOrigin = try send(server, "POST", "/__mock/reset", host: "127.0.0.1:\(server.port)", origin: "http://127.0.0.1:\(server.port)",
                                  contentType: "application/json", body: "{}")
        XCTAssertEqual(sameOrigin.status, 200)
        XCTAssertEqual(try send(server, "GET", "/__mock/", host: "localhost:\(server.port)").status, 200)
    }
}
