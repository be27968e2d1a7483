import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// The SMTP port as Apple's Private Email Relay (docs/apple-behaviour.md §6), over real sockets: who
/// may mail a relay address, on both relay domains; the mailbox API; forwarding to a catcher.
final class RelayMailTests: XCTestCase {
    static let otherTeam = "OTHERTEAM1"

    /// The default scenario (bob relayed from `privaterelay.appleid.com`, carol from
    /// `private.icloud.com`) plus a second team (its own sources: a domain and one address).
    private func start(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> AppleIDMockServer {
        try startFrozenMock { configuration in
            configuration.smtpPort = 0
            var scenario = configuration.scenario
            scenario.teams.append(Scenario.Team(teamID: Self.otherTeam, developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY002",
                                                                                                          publicKeyPEM: scenario.teams[0].developerKeys[0].publicKeyPEM)],
                                                clients: [Scenario.Client(clientID: "org.other.app", kind: .appID)],
                                                emailSources: Scenario.EmailSources(domains: ["other.example"], addresses: ["Billing@Partner.example"])))
            configuration.scenario = scenario
            adjust(&configuration)
        }
    }

    private func relay(_ user: String, team: String = "MOCKTEAM01", domain: RelayDomain = .privateRelayAppleID) -> String {
        Identity.relayAddress(teamID: team, userID: user, domain: domain)
    }

    /// One whole conversation written at once (pipelined), ending with QUIT: every reply, as sent.
    private func converse(_ server: AppleIDMockServer, from sender: String, to recipients: [String], body: String = "Subject: Hi\r\n\r\nHello\r\n")
        throws -> String {
        let client = try RawHTTPClient(port: try XCTUnwrap(server.smtpPort))
        defer { client.close() }
        var script = "EHLO backend.example\r\nMAIL FROM:<\(sender)>\r\n"
        for recipient in recipients { script += "RCPT TO:<\(recipient)>\r\n" }
        script += "DATA\r\n\(body).\r\nQUIT\r\n"
        try client.send(script)
        return String(decoding: try client.readAll(), as: UTF8.self)
    }

    private static let greeting = "220 appleid-mock ESMTP AppleIDMock\r\n"
    private static let ehlo = "250-appleid-mock\r\n250-PIPELINING\r\n250-SIZE 10485760\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES\r\n"

    private func mail(_ server: AppleIDMockServer, _ query: String = "") throws -> [JSONObject] {
        let response = try server.get("/__mock/mail" + query)
        XCTAssertEqual(response.status, 200, String(decoding: response.body, as: UTF8.self))
        return try XCTUnwrap(try jsonObject(response.body)["messages"]?.arrayValue).compactMap(\.objectValue)
    }

    private func verdicts(_ message: JSONObject) -> [String] {
        (message["recipients"]?.arrayValue ?? []).compactMap { $0.objectValue?["verdict"]?.stringValue }
    }

    func testRelay_ForwardsARegisteredSendersMail_OnBothDomains_ToTheRealAddresses() throws {
        let server = try start()
        defer { server.stop() }
        let (bob, carol) = (relay("bob"), relay("carol", domain: .privateICloud))
        XCTAssertTrue(bob.hasSuffix("@privaterelay.appleid.com") && carol.hasSuffix("@private.icloud.com"))
        let transcript = try converse(server, from: "noreply@example.com", to: [bob, carol.uppercased()])
        XCTAssertEqual(transcript, Self.greeting + Self.ehlo + "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n250 2.1.5 Ok\r\n"
                       + "354 End data with <CR><LF>.<CR><LF>\r\n250 2.0.0 Ok: queued as 1\r\n221 2.0.0 Bye\r\n")
        let messages = try mail(server)
        XCTAssertEqual(messages.count, 1)
        let recipients = try XCTUnwrap(messages[0]["recipients"]?.arrayValue).compactMap(\.objectValue)
        XCTAssertEqual(recipients.map { $0["real_address"] }, ["bob@example.com", "carol@example.com"])
        XCTAssertEqual(recipients.map { $0["user"] }, ["bob", "carol"])
        XCTAssertEqual(verdicts(messages[0]), ["forwarded", "forwarded"])
        XCTAssertEqual(messages[0]["subject"], "Hi")
        XCTAssertEqual(messages[0]["text"], "Hello\r\n")
        XCTAssertEqual(messages[0]["from"], "noreply@example.com")
    }

    func testRelay_RefusesWhatApplesRelayRefuses_WithTheObservedReply_AndAcceptsEachTwin() throws {
        let server = try start()
        defer { server.stop() }
        let bob = relay("bob")
        let unauthorized = { (sender: String) in "550 5.1.1 <\(sender)>: unauthorized sender\r\n" }
        let unknown = { (recipient: String) in "550 5.1.1 <\(recipient)>: user not found\r\n" }
        let accepted = "250 2.1.5 Ok\r\n"
        // (sender, recipient, reply) — each refusal next to the twin that is accepted.
        let cases: [(String, String, String)] = [
            ("noreply@example.com", bob, accepted),
            ("noreply@example.org", bob, unauthorized("noreply@example.org")),              // unregistered domain
            ("noreply@mail.example.com", bob, unauthorized("noreply@mail.example.com")),    // a subdomain is its own entry
            ("news@other.example", bob, unauthorized("news@other.example")),                // another team's domain
            ("news@other.example", relay("bob", team: Self.otherTeam), accepted),
            ("billing@partner.example", relay("bob", team: Self.otherTeam), accepted),      // a registered address
            ("sales@partner.example", relay("bob", team: Self.otherTeam), unauthorized("sales@partner.example")),
            ("", bob, unauthorized("")),                                                      // the null sender
            ("noreply@example.com", "zzzzzzzzzz@private.icloud.com", unknown("zzzzzzzzzz@private.icloud.com")),  // no such relay address
            ("noreply@example.com", relay("bob", domain: .privateICloud), unknown(relay("bob", domain: .privateICloud))),  // bob's local part, the wrong domain
            ("noreply@example.com", relay("carol", domain: .privateICloud), accepted),     // carol's is on the new domain
        ]
        for (sender, recipient, reply) in cases {
            let client = try RawHTTPClient(port: try XCTUnwrap(server.smtpPort))
            try client.send("EHLO backend.example\r\nMAIL FROM:<\(sender)>\r\nRCPT TO:<\(recipient)>\r\nQUIT\r\n")
            let transcript = String(decoding: try client.readAll(), as: UTF8.self)
            client.close()
            XCTAssertEqual(transcript, Self.greeting + Self.ehlo + "250 2.1.0 Ok\r\n" + reply + "221 2.0.0 Bye\r\n", "\(sender) -> \(recipient)")
        }
        // Each refusal is in the mailbox with the developer's reason.
        let reasons = try mail(server).compactMap { $0["recipients"]?.arrayValue?.first?.objectValue?["reason"]?.stringValue }
        XCTAssertEqual(reasons.count, 7)
        XCTAssertEqual(reasons[0], "the sender noreply@example.org is not registered in team MOCKTEAM01's email_sources")
        XCTAssertEqual(reasons[4], "the null sender <> is not registered in team MOCKTEAM01's email_sources")
        XCTAssertEqual(reasons[5], "no user has the relay address zzzzzzzzzz@private.icloud.com")
        // Mail to an address that is not a relay one is kept as direct mail.
        _ = try converse(server, from: "noreply@example.org", to: ["someone@gmail.example"])
        XCTAssertEqual(verdicts(try XCTUnwrap(try mail(server).last)), ["direct"])
    }

    func testRelay_OnICloudCom_ForwardsToTheUserWhoHoldsTheAddress_AndKeepsAnyOtherICloudAddressAsDirectMail() throws {
        let server = try start()
        defer { server.stop() }
        let added = try server.postJSON("/__mock/users", #"{"id":"dave","email":"dave@example.net","hide_email":true,"relay_domain":"icloud.com"}"#)
        XCTAssertEqual(added.status, 201, String(decoding: added.body, as: UTF8.self))
        let dave = relay("dave", domain: .iCloud)
        XCTAssertTrue(dave.hasSuffix("@icloud.com"), dave)
        XCTAssertEqual(try rcpt(server, from: "noreply@example.com", to: dave), "250 2.1.5 Ok")
        XCTAssertEqual(try rcpt(server, from: "noreply@example.org", to: dave), "550 5.1.1 <noreply@example.org>: unauthorized sender")
        // Someone's own iCloud address (or Hide My Email) is no relay address of the mock: direct
        // mail, accepted; on a relay-only domain the same local part is an unknown relay address.
        XCTAssertEqual(try rcpt(server, from: "noreply@example.org", to: "someone@iCloud.com"), "250 2.1.5 Ok")
        XCTAssertEqual(try rcpt(server, from: "noreply@example.com", to: "someone@privaterelay.appleid.com"),
                       "550 5.1.1 <someone@privaterelay.appleid.com>: user not found")
        _ = try converse(server, from: "noreply@example.com", to: [dave, "someone@icloud.com"])
        let last = try XCTUnwrap(try mail(server).last)
        XCTAssertEqual(verdicts(last), ["forwarded", "direct"])
        XCTAssertEqual(last["recipients"]?.arrayValue?.first?.objectValue?["real_address"], "dave@example.net")
    }

    /// `RCPT TO` for one recipient; the reply to it.
    private func rcpt(_ server: AppleIDMockServer, from sender: String, to recipient: String) throws -> String {
        let client = try RawHTTPClient(port: try XCTUnwrap(server.smtpPort))
        defer { client.close() }
        try client.send("HELO backend.example\r\nMAIL FROM:<\(sender)>\r\nRCPT TO:<\(recipient)>\r\nQUIT\r\n")
        let replies = String(decoding: try client.readAll(), as: UTF8.self).split(separator: "\r\n")
        return replies.count == 5 ? String(replies[3]) : replies.joined(separator: " | ")
    }

    func testRelay_RefusesASenderWhoseDomainFailsSPF_AndAcceptsItsPassingTwin() throws {
        let server = try start { configuration in
            configuration.scenario.teams[0].emailSources = Scenario.EmailSources(domains: ["example.com", "spoofed.example"],
                                                                                 addresses: ["ops@spoofed.example"], spfFailing: ["spoofed.example"])
        }
        defer { server.stop() }
        let bob = relay("bob")
        XCTAssertEqual(try rcpt(server, from: "news@spoofed.example", to: bob), "550 5.7.23 <news@spoofed.example>: SPF validation failed")
        // A registered address on that domain fails too: SPF is the domain's.
        XCTAssertEqual(try rcpt(server, from: "ops@spoofed.example", to: bob), "550 5.7.23 <ops@spoofed.example>: SPF validation failed")
        XCTAssertEqual(try rcpt(server, from: "news@example.com", to: bob), "250 2.1.5 Ok")
        let reasons = try mail(server).compactMap { $0["recipients"]?.arrayValue?.first?.objectValue?["reason"]?.stringValue }
        XCTAssertEqual(reasons.first, #"the sender news@spoofed.example is on a domain whose SPF check fails (team MOCKTEAM01's email_sources say "spf": "fail")"#)
    }

    func testRelay_AnswersEachReasonWithItsOwnText_FromTheScenario() throws {
        let server = try start { configuration in
            configuration.scenario.compatibility.relayRefusal.unknownRecipient = "5.1.1 <{recipient}>: no such user here"
            configuration.scenario.compatibility.relayRefusal.unauthorizedSender = "5.7.1 {sender} may not send to {recipient}"
        }
        defer { server.stop() }
        XCTAssertEqual(try rcpt(server, from: "noreply@example.com", to: "zzzzzzzzzz@privaterelay.appleid.com"),
                       "550 5.1.1 <zzzzzzzzzz@privaterelay.appleid.com>: no such user here")
        XCTAssertEqual(try rcpt(server, from: "x@example.org", to: relay("bob")), "550 5.7.1 x@example.org may not send to \(relay("bob"))")
        XCTAssertEqual(try rcpt(server, from: "noreply@example.com", to: relay("bob")), "250 2.1.5 Ok")
    }

    func testScenario_ReadsRelayRefusalByReason_AndItsFormerStringAsTheSenderText() throws {
        func load(_ refusal: String, sources: String = #"{"domains": ["example.com"]}"#) throws(ScenarioError) -> Scenario {
            guard case .object(var top) = Scenario.default.json, case .object(var knobs)? = top["compatibility"],
                  case .array(var teams)? = top["teams"], case .object(var team) = teams[0] else { return Scenario.default }
            knobs["relay_refusal"] = try? JSONParser.parse(Array(refusal.utf8))
            team["email_sources"] = try? JSONParser.parse(Array(sources.utf8))
            teams[0] = .object(team)
            top["compatibility"] = .object(knobs)
            top["teams"] = .array(teams)
            return try Scenario.load(json: JSONWriter.compact(.object(top)))
        }
        // The former form: one string, now the unregistered sender's text only.
        let former = try load(#""5.7.1 <{sender}>: go away""#)
        XCTAssertEqual(former.compatibility.relayRefusal.unauthorizedSender, "5.7.1 <{sender}>: go away")
        XCTAssertEqual(former.compatibility.relayRefusal.unknownRecipient, "5.1.1 <{recipient}>: user not found")
        let byReason = try load(#"{"spf_fail": "5.7.1 <{sender}>: SPF"}"#)
        XCTAssertEqual(byReason.compatibility.relayRefusal.spfFail, "5.7.1 <{sender}>: SPF")
        XCTAssertEqual(byReason.compatibility.relayRefusal.unauthorizedSender, "5.1.1 <{sender}>: unauthorized sender")
        // Printed back as the object, and read back equal.
        XCTAssertEqual(try Scenario.load(json: Array(byReason.prettyJSON.utf8)), byReason)
        let spf = try load(#"{"spf_fail": "x"}"#, sources: #"{"domains": [{"domain": "Example.com", "spf": "fail"}, "other.example"]}"#)
        XCTAssertEqual(spf.teams[0].emailSources, Scenario.EmailSources(domains: ["example.com", "other.example"], spfFailing: ["example.com"]))
        XCTAssertEqual(try Scenario.load(json: Array(spf.prettyJSON.utf8)), spf)
        // Twins refused with their paths.
        let problems = { (refusal: String, sources: String) -> [String] in
            do {
                _ = try load(refusal, sources: sources)
                return []
            } catch {
                return (error as? ScenarioError)?.problems.map(\.description) ?? ["\(error)"]
            }
        }
        XCTAssertEqual(problems(#"{"spam": "x"}"#, #"{"domains": ["example.com"]}"#),
                       ["compatibility.relay_refusal.spam: unknown key (expected one of: unknown_recipient, account_deleted, forwarding_disabled, "
                        + "unauthorized_sender, spf_fail)"])
        XCTAssertEqual(problems(#"{"spf_fail": ""}"#, #"{"domains": ["example.com"]}"#),
                       ["compatibility.relay_refusal.spf_fail: expected 1 to 400 printable ASCII characters (an SMTP reply line)"])
        XCTAssertEqual(problems(#""x""#, #"{"domains": [{"domain": "example.com", "spf": "softfail"}]}"#),
                       [#"teams[0].email_sources.domains[0].spf: expected "pass" or "fail", found "softfail""#])
    }

    func testRelay_ForwardingOffAndDeletedAccounts_Refused_ForwardingOnAgain_Accepted() throws {
        let server = try start()
        defer { server.stop() }
        let bob = relay("bob")
        // email-disabled needs bob's consent with his email hidden.
        XCTAssertEqual(try server.postJSON("/__mock/sign-in", #"{"user":"bob","client_id":"com.example.app"}"#).status, 200)
        func rcpt() throws -> String {
            let client = try RawHTTPClient(port: try XCTUnwrap(server.smtpPort))
            defer { client.close() }
            try client.send("HELO backend.example\r\nMAIL FROM:<noreply@example.com>\r\nRCPT TO:<\(bob)>\r\nQUIT\r\n")
            let replies = String(decoding: try client.readAll(), as: UTF8.self).split(separator: "\r\n")
            return replies.count == 5 ? String(replies[3]) : replies.joined(separator: " | ")
        }
        XCTAssertEqual(try rcpt(), "250 2.1.5 Ok")
        for (type, expected) in [("email-disabled", "550 5.1.1 <\(bob)>: user not found"), ("email-enabled", "250 2.1.5 Ok"),
                                 ("account-deleted", "550 5.1.1 <\(bob)>: user not found")] {
            let event = try server.postJSON("/__mock/events", #"{"type":"\#(type)","user":"bob","client_id":"com.example.app"}"#)
            XCTAssertEqual(event.status, 202, String(decoding: event.body, as: UTF8.self))
            XCTAssertEqual(try rcpt(), expected, type)
        }
        let reasons = try mail(server).compactMap { $0["recipients"]?.arrayValue?.first?.objectValue?["reason"]?.stringValue }
        XCTAssertEqual(reasons, ["bob turned off forwarding for team MOCKTEAM01 (email-disabled)", "bob deleted their Apple Account"])
    }

    func testMailbox_ShowRawClearAndLongPoll_BadParametersNamed() throws {
        let server = try start()
        defer { server.stop() }
        let body = "Subject: =?UTF-8?B?V2VsY29tZSDinJM=?=\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=C3=A9\r\n..dot\r\n"
        _ = try converse(server, from: "noreply@example.com", to: [relay("bob")], body: body)
        let shown = try jsonObject(try server.get("/__mock/mail/1").body)
        XCTAssertEqual(shown["subject"], "Welcome ✓")
        XCTAssertEqual(shown["text"], "Café\r\n.dot\r\n")
        // Multipart, a nested boundary that extends the outer one, and Windows-1252 text.
        let multipart = "Subject: Receipt\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\n"
            + "Content-Type: multipart/alternative; boundary=\"b2\"\r\n\r\n--b2\r\nContent-Type: text/plain; charset=windows-1252\r\n"
            + "Content-Transfer-Encoding: quoted-printable\r\n\r\n=80 5 =93paid=94\r\n--b2\r\nContent-Type: text/html\r\n\r\n<p>paid</p>\r\n--b2--\r\n"
            + "--b\r\nContent-Type: text/plain\r\nContent-Disposition: attachment\r\n\r\nnot this\r\n--b--\r\n"
        _ = try converse(server, from: "noreply@example.com", to: ["ops@example.net"], body: multipart)
        let parts = try jsonObject(try server.get("/__mock/mail/2").body)
        XCTAssertEqual(parts["text"], "€ 5 “paid”")
        XCTAssertEqual(parts["html"], "<p>paid</p>")
        let raw = try server.get("/__mock/mail/1/raw")
        XCTAssertEqual(raw.headers.first { $0.0.lowercased() == "content-type" }?.1, "message/rfc822")
        XCTAssertEqual(String(decoding: raw.body, as: UTF8.self), body.replacingOccurrences(of: "..dot", with: ".dot"))
        // A refusal has no message to show raw.
        _ = try? converse(server, from: "x@nowhere.example", to: [relay("bob")])  // a refusal: id 3
        let refusal = try XCTUnwrap(try mail(server).last?["id"]?.intValue)
        XCTAssertEqual(try server.get("/__mock/mail/\(refusal)/raw").status, 404)
        // A long poll answers when the next message arrives.
        let waiting = Mutex<[JSONObject]?>(nil)
        let done = expectation(description: "long poll answered")
        DispatchQueue.global().async {
            let response = try? server.get("/__mock/mail?after=\(refusal)&wait=10")
            let found = response.flatMap { try? JSONParser.parse($0.body).objectValue?["messages"]?.arrayValue?.compactMap(\.objectValue) }
            waiting.withLock { $0 = found }
            done.fulfill()
        }
        _ = try converse(server, from: "noreply@example.com", to: ["ops@example.net"])
        wait(for: [done], timeout: 15)
        XCTAssertEqual(waiting.withLock { $0 }?.map { verdicts($0) }, [["direct"]])
        XCTAssertEqual(try mail(server, "?after=1&limit=1").map { $0["id"]?.intValue }, [2])
        for (query, field) in [("?after=abc", "after"), ("?limit=0", "limit"), ("?limit=1001", "limit"), ("?wait=61", "wait"), ("?colour=red", "colour")] {
            let response = try server.get("/__mock/mail" + query)
            XCTAssertEqual(response.status, 400, query)
            XCTAssertEqual(try jsonObject(response.body)["field"], .string(field), query)
        }
        XCTAssertEqual(try server.get("/__mock/mail/99").status, 404)
        XCTAssertEqual(try server.get("/__mock/mail/x").status, 404)
        XCTAssertEqual(try server.client().roundTrip("DELETE", "/__mock/mail").status, 200)
        XCTAssertEqual(try mail(server).count, 0)
        // Ids go on after a clear.
        _ = try converse(server, from: "noreply@example.com", to: ["ops@example.net"])
        XCTAssertEqual(try mail(server).map { $0["id"]?.intValue }, [5])
    }

    func testMailbox_KeepsTheNewestWithinItsCapacity() throws {
        let server = try start { $0.scenario.mail.capacity = 3 }
        defer { server.stop() }
        for index in 1...5 { _ = try converse(server, from: "noreply@example.com", to: ["n\(index)@example.net"]) }
        XCTAssertEqual(try mail(server).map { $0["id"]?.intValue }, [3, 4, 5])
        XCTAssertEqual(server.mail.usage.count, 3)
    }

    func testForwarding_SendsForwardedMailToTheRealAddress_WithDeliveredTo_AndDirectMailAsItCame() throws {
        let catcher = CatchingHandler()
        let catching = try catcher.listen()
        defer { catching.stop() }
        let server = try start { $0.mailForward = "smtp://127.0.0.1:\(catching.smtpPort ?? 0)" }
        defer { server.stop() }
        let bob = relay("bob")
        _ = try converse(server, from: "noreply@example.com", to: [bob, "ops@example.net"], body: "To: \(bob)\r\nSubject: Hi\r\n\r\nHello\r\n")
        _ = try? converse(server, from: "spam@example.org", to: [bob])
        let caught = catcher.waitFor(2)
        XCTAssertEqual(caught.map(\.recipients), [["bob@example.com"], ["ops@example.net"]])
        // The trace line a relaying server adds (RFC 5321 §4.4), dated by the mock clock.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, d MMM yyyy HH:mm:ss '+0000'"
        let received = "Received: from backend.example by appleid-mock with ESMTP id 1; \(formatter.string(from: Date(timeIntervalSince1970: Double(frozenNow))))\r\n"
        XCTAssertEqual(String(decoding: caught.first?.data ?? [], as: UTF8.self),
                       "Delivered-To: bob@example.com\r\n" + received + "To: \(bob)\r\nSubject: Hi\r\n\r\nHello\r\n")
        XCTAssertEqual(String(decoding: caught.last?.data ?? [], as: UTF8.self), received + "To: \(bob)\r\nSubject: Hi\r\n\r\nHello\r\n")
        // The record says where the copy went; the refusal was never forwarded.
        var outcome: JSONValue?
        try eventuallyTrue {
            outcome = try jsonObject(try server.get("/__mock/mail/1").body)["forwarding"]?.objectValue?["outcome"]
            return outcome == "delivered"
        }
        XCTAssertEqual(outcome, "delivered")
        XCTAssertEqual(try jsonObject(try server.get("/__mock/mail/2").body)["forwarding"], .null)
        XCTAssertEqual(catcher.count, 2)
    }

    func testRelay_ARecipientTwiceGetsOneCopy_ALoopIsRefused_RefusalsCountAsErrors() throws {
        let catcher = CatchingHandler()
        let catching = try catcher.listen()
        defer { catching.stop() }
        let server = try start { $0.mailForward = "smtp://127.0.0.1:\(catching.smtpPort ?? 0)" }
        defer { server.stop() }
        let bob = relay("bob")
        _ = try converse(server, from: "noreply@example.com", to: [bob, bob.uppercased(), bob])
        XCTAssertEqual(catcher.waitFor(1).map(\.recipients), [["bob@example.com"]])
        XCTAssertEqual(try mail(server).first.map(verdicts), ["forwarded"])
        // A message that has passed 31 servers is a loop: refused at the dot; 30 pass (the twin).
        for (hops, reply) in [(31, "554 5.4.6 Error: too many hops (a forwarding loop?)"), (30, "250 2.0.0 Ok: queued as 2")] {
            let body = String(repeating: "Received: by relay.example; Thu, 1 Jan 2026 00:00:00 +0000\r\n", count: hops) + "Subject: x\r\n\r\nx\r\n"
            let transcript = try converse(server, from: "noreply@example.com", to: ["ops@example.net"], body: body)
            XCTAssertTrue(transcript.contains("354 End data with <CR><LF>.<CR><LF>\r\n\(reply)\r\n"), "\(hops): \(transcript)")
        }
        // Ten refused recipients on one connection are ten errors: the connection is let go.
        let client = try RawHTTPClient(port: try XCTUnwrap(server.smtpPort))
        defer { client.close() }
        try client.send("EHLO backend.example\r\nMAIL FROM:<spam@example.org>\r\n" + String(repeating: "RCPT TO:<\(bob)>\r\n", count: 12))
        let replies = String(decoding: try client.readAll(), as: UTF8.self).split(separator: "\r\n").map(String.init)
        XCTAssertEqual(replies.filter { $0.hasPrefix("550 ") }.count, 10)
        XCTAssertEqual(replies.last, "421 4.7.0 appleid-mock Error: too many errors")
    }

    func testForwarding_ToACatcherThatIsNotThere_IsRecordedAsFailed() throws {
        let closedPort = try { () throws -> Int in
            let probe = try HTTPServer.start(configuration: { var c = HTTPServerConfiguration.testing(); c.port = 0; return c }(), routes: Router().build())
            let port = probe.port
            probe.stop()
            return port
        }()
        let server = try start { $0.mailForward = "smtp://127.0.0.1:\(closedPort)" }
        defer { server.stop() }
        _ = try converse(server, from: "noreply@example.com", to: ["ops@example.net"])
        var forwarding: JSONObject?
        try eventuallyTrue {
            forwarding = try jsonObject(try server.get("/__mock/mail/1").body)["forwarding"]?.objectValue
            return forwarding?["outcome"] == "failed"
        }
        XCTAssertEqual(forwarding?["outcome"], "failed")
        XCTAssertTrue(forwarding?["error"]?.stringValue?.hasPrefix("connect") == true, "\(String(describing: forwarding))")
    }

    func testStart_RefusesAForwardTargetThatIsNotSMTP() {
        for target in ["http://127.0.0.1:25", "smtp://127.0.0.1", "smtp://:25", "smtp://h:0", "smtp://h:70000", "smtp://a@b:25", "smtp://h:+25"] {
            XCTAssertThrowsError(try start { $0.mailForward = target }, target) { error in
                XCTAssertEqual("\(error)", "--mail-forward: expected smtp://HOST:PORT, found \"\(target)\"")
            }
        }
    }
}

/// Keeps every message an SMTP listener is given, accepting all.
final class CatchingHandler: SMTPHandler {
    private let messages = Mutex<[SMTPMessage]>([])

    func sender(_ address: String, heloName: String) -> SMTPReply? { nil }
    func recipient(_ address: String, sender: String) -> SMTPReply? { nil }
    func deliver(_ message: SMTPMessage) -> SMTPReply? {
        messages.withLock { $0.append(message) }
        return nil
    }

    var count: Int { messages.withLock { $0.count } }

    /// A second SMTP listener on an ephemeral port (standing in for Mailpit) that keeps what it is given.
    func listen() throws -> HTTPServer {
        var configuration = HTTPServerConfiguration.testing()
        configuration.port = 0
        var smtp = SMTPServerConfiguration(handler: self)
        smtp.port = 0
        return try HTTPServer.start(configuration: configuration, routes: Router().build(), smtp: smtp)
    }

    /// The messages once `count` have come (or what came within `conditionBound`).
    func waitFor(_ count: Int) -> [SMTPMessage] {
        eventuallyTrue { messages.withLock { $0 }.count >= count }
        return messages.withLock { $0 }
    }
}
