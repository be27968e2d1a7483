import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

final class CLITests: XCTestCase {
    func testServe_PrintsOneListeningLine_ServesKeys_AndExitsZeroOnSIGTERM() throws {
        let server = try CLIProcess.Server(["--port", "0"])
        XCTAssertNotNil(server.firstLine.range(of: #"^listening on http://127\.0\.0\.1:[0-9]+$"#, options: .regularExpression), server.firstLine)
        let port = try XCTUnwrap(server.port)
        XCTAssertNotEqual(port, 0)
        let response = try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys")
        XCTAssertEqual(response.status, 200)
        let (status, rest, _) = server.stop()
        XCTAssertEqual(status, 0)
        XCTAssertEqual(rest, "", "exactly one line on stdout")
    }

    func testServe_ExitsZeroOnSIGINT() throws {
        let server = try CLIProcess.Server(["serve", "--port", "0"])
        XCTAssertNotNil(server.port)
        XCTAssertEqual(server.stop(signal: SIGINT).status, 0)
    }

    func testServe_TakesSettingsFromEnvironment_FlagsWin() throws {
        let server = try CLIProcess.Server(["--issuer", "https://flag.example"],
                                           environment: ["APPLEID_MOCK_PORT": "0", "APPLEID_MOCK_ISSUER": "https://env.example",
                                                         "APPLEID_MOCK_BASE_URL": "http://mock.internal:8080"])
        let port = try XCTUnwrap(server.port)
        defer { _ = server.stop() }
        let document = try RawHTTPClient(port: port).roundTrip("GET", "/.well-known/openid-configuration").text
        XCTAssertTrue(document.hasPrefix(#"{"issuer":"https://flag.example","authorization_endpoint":"http://mock.internal:8080/auth/authorize""#), document)
    }

    func testServe_RejectsBadInputWithExitTwo() throws {
        let cases: [([String], String)] = [
            (["--port", "http"], "appleid-mock: --port expects an integer from 0 to 65535, got \"http\""),
            (["--port", "70000"], "appleid-mock: --port expects an integer from 0 to 65535, got \"70000\""),
            (["--bogus"], "appleid-mock: unknown option --bogus"),
            (["--keys", "/nonexistent"], "appleid-mock: --keys /nonexistent: no such directory"),
            (["--base-url", "mock"], "appleid-mock: --base-url expects an absolute http(s) URL, got \"mock\""),
            (["--port"], "appleid-mock: --port needs a value"),
            (["frobnicate"], "appleid-mock: unknown command \"frobnicate\""),
        ]
        for (arguments, message) in cases {
            let result = try CLIProcess.run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stderr.split(separator: "\n").first.map(String.init), message, "\(arguments)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
    }

    func testServe_ExitsTwoNamingTheFile_WhenTheCertificateChainHasElevenCertificates() throws {
        let directory = NSTemporaryDirectory() + "cli-tls-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        XCTAssertEqual(try CLIProcess.run(["tls", "generate", "--out", directory]).status, 0)
        let chain = try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8)
        let ca = try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8)
        try (chain + String(repeating: ca, count: 9)).write(toFile: directory + "/long.pem", atomically: true, encoding: .utf8)
        let refused = try CLIProcess.run(["--port", "0", "--tls-cert", directory + "/long.pem", "--tls-key", directory + "/key.pem"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stderr.split(separator: "\n").first.map(String.init),
                       "appleid-mock: TLS: certificate file \(directory)/long.pem: 11 certificates, more than 10 (clients refuse long chains)")
        // The twin: the generated 2-certificate chain serves.
        let server = try CLIProcess.Server(["--port", "0", "--tls-cert", directory + "/cert.pem", "--tls-key", directory + "/key.pem"])
        XCTAssertEqual(server.stop().status, 0)
    }

    func testServe_RejectsInvalidScenarioFileNamingThePath() throws {
        let file = NSTemporaryDirectory() + "scenario-\(UUID().uuidString).json"
        try #"{"teams":[],"users":[{"id":"x","email":"nope"}]}"#.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try CLIProcess.run(["--scenario", file, "--port", "0"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderr, "appleid-mock: scenario \(file):\nteams: expected at least one team\nusers[0].email: expected an email address\n")
    }

    func testHelp_PrintsUsageOnStdoutForEveryCommand() throws {
        for arguments in [["--help"], ["serve", "--help"], ["client-secret", "-h"], ["keys", "--help"], ["scenario", "--help"]] {
            let result = try CLIProcess.run(arguments)
            XCTAssertEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.stdout.contains("usage: appleid-mock"), "\(arguments): \(result.stdout)")
            XCTAssertEqual(result.stderr, "")
        }
    }

    func testScenarioPrint_OutputPassesScenarioCheck_AndABrokenTwinFails() throws {
        let printed = try CLIProcess.run(["scenario", "print"])
        XCTAssertEqual(printed.status, 0)
        let file = NSTemporaryDirectory() + "scenario-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try printed.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let ok = try CLIProcess.run(["scenario", "check", file])
        XCTAssertEqual(ok.status, 0)
        XCTAssertEqual(ok.stdout, "\(file): ok\n")

        try printed.stdout.replacingOccurrences(of: "\"https://app.example.com/callback\"", with: "\"callback\"")
            .write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try CLIProcess.run(["scenario", "check", file])
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr, "appleid-mock: \(file):\nteams[0].clients[1].redirect_uris[0]: expected an absolute URL\n")
        XCTAssertEqual(try CLIProcess.run(["scenario", "check"]).status, 2)
        XCTAssertEqual(try CLIProcess.run(["scenario", "check", "/nonexistent.json"]).stderr,
                       "appleid-mock: /nonexistent.json:\n$: cannot read file /nonexistent.json: No such file or directory\n")
    }

    func testScenarioCheck_WarnsWhenARotationPatternCannotKeep3To5KeysPublished_ExitingZero() throws {
        let file = NSTemporaryDirectory() + "scenario-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        func check(every: Int, ahead: Int, after: Int) throws -> CLIProcess.Result {
            var scenario = Scenario.default
            scenario.signingKeys.rotation = .init(every: every, publishAhead: ahead, retireAfter: after)
            try scenario.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
            return try CLIProcess.run(["scenario", "check", file])
        }
        // README's former pattern (30 days, a week ahead, two weeks after) falls to 1 or 2 keys.
        let bad = try check(every: 2_592_000, ahead: 604_800, after: 1_209_600)
        XCTAssertEqual(bad.status, 0)
        XCTAssertEqual(bad.stdout, "\(file): ok\n")
        XCTAssertEqual(bad.stderr, "appleid-mock: warning: \(file): signing_keys.rotation keeps 1 to 2 keys published at steady state, "
                       + "where Apple publishes 3 to 5 (docs/apple-behaviour.md §1.5): make publish_ahead + retire_after at least 2 × every (5184000), "
                       + "e.g. retire_after 4579200, or shorten every\n")
        // Twin: README's pattern (4 weeks, a week ahead, seven weeks after) keeps 3, and check says only ok.
        let good = try check(every: 2_419_200, ahead: 604_800, after: 4_233_600)
        XCTAssertEqual(good.status, 0)
        XCTAssertEqual(good.stdout, "\(file): ok\n")
        XCTAssertEqual(good.stderr, "")
    }

    func testClientSecret_MintsES256JWTVerifiableWithTheDeveloperKey() throws {
        let result = try CLIProcess.run(["client-secret", "--issued-at", "1700000000", "--lifetime", "600"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let token = try CompactJWS.parse(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertEqual(String(decoding: Base64URL.decode(token.headerSegment) ?? [], as: UTF8.self), #"{"alg":"ES256","kid":"MOCKKEY001"}"#)
        XCTAssertEqual(String(decoding: token.payload, as: UTF8.self),
                       #"{"iss":"MOCKTEAM01","iat":1700000000,"exp":1700000600,"aud":"https://appleid.apple.com","sub":"com.example.web"}"#)
        let pem = try String(contentsOfFile: CLIProcess.root + "/Keys/AuthKey_MOCKKEY001.p8", encoding: .utf8)
        XCTAssertTrue(token.verifyES256(with: try P256PrivateKey(pem: pem).publicKey))
        XCTAssertFalse(token.verifyES256(with: try P256PrivateKey.generate().publicKey))
    }

    func testClientSecret_RejectsBadInputWithExitTwo() throws {
        XCTAssertEqual(try CLIProcess.run(["client-secret", "--lifetime", "15777001"]).status, 2)
        XCTAssertEqual(try CLIProcess.run(["client-secret", "--lifetime", "15777000"]).status, 0)
        XCTAssertEqual(try CLIProcess.run(["client-secret", "--team", "NOSUCHTEAM"]).stderr.split(separator: "\n").first,
                       "appleid-mock: --team NOSUCHTEAM: no such team in the scenario")
        XCTAssertEqual(try CLIProcess.run(["client-secret", "--key", "/nonexistent.p8"]).status, 2)
        XCTAssertEqual(try CLIProcess.run(["client-secret", "--key", "Keys/signing/W2ek7HdPaL.pem"]).status, 2, "an RSA key is not a .p8")
    }

    func testKeysGenerate_WritesLoadableKeys_AndNeverOverwrites() throws {
        let directory = NSTemporaryDirectory() + "keys-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try CLIProcess.run(["keys", "generate", "--out", directory, "--count", "2"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let signing = try FileManager.default.contentsOfDirectory(atPath: directory + "/signing").sorted()
        XCTAssertEqual(signing.count, 2)
        for name in signing {
            XCTAssertEqual(name.count, 14, name)
            let key = try RSAPrivateKey(pem: try String(contentsOfFile: directory + "/signing/" + name, encoding: .utf8))
            XCTAssertEqual(key.bits, 2048)
        }
        let p8 = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasPrefix("AuthKey_") })
        XCTAssertNotNil(p8.range(of: #"^AuthKey_[A-Z0-9]{10}\.p8$"#, options: .regularExpression))
        XCTAssertNoThrow(try P256PrivateKey(pem: try String(contentsOfFile: directory + "/" + p8, encoding: .utf8)))

        let server = try CLIProcess.Server(["--port", "0", "--keys", directory + "/signing"])
        let keys = try RawHTTPClient(port: try XCTUnwrap(server.port)).roundTrip("GET", "/auth/keys").text
        XCTAssertEqual(server.stop().status, 0)
        for name in signing { XCTAssertTrue(keys.contains("\"kid\":\"\(name.dropLast(4))\""), keys) }

        XCTAssertEqual(try CLIProcess.run(["keys", "generate", "--out", directory, "--count", "11"]).status, 2)
        XCTAssertEqual(try CLIProcess.run(["keys", "generate"]).status, 2)
        XCTAssertEqual(try CLIProcess.run(["keys", "bogus"]).status, 2)
    }

    func testServe_OutsideTheRepository_ServesTheBuiltInKeys_AndFreshOnesBeyondThem() throws {
        let file = NSTemporaryDirectory() + "four-keys-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        var scenario = Scenario.default
        scenario.signingKeys.count = 4
        try scenario.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
        let server = try CLIProcess.Server(["--port", "0", "--scenario", file], directory: NSTemporaryDirectory())
        let port = try XCTUnwrap(server.port, server.firstLine)
        let keys = try JWKSet(json: JSONParser.parse(try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys").body)).keys.map(\.kid)
        let stopped = server.stop()
        XCTAssertEqual(stopped.status, 0)
        XCTAssertEqual(keys.count, 4)
        XCTAssertEqual(Set(keys).intersection(["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"]).count, 3, "\(keys)")
        XCTAssertEqual(stopped.stderr, "appleid-mock: no Keys/signing in the working directory; serving the built-in copies of its test keys"
                       + " (W2ek7HdPaL, Ymq4vB9xTz, r8TcNf3QsJ) and 1 fresh in-memory key\n")
    }

    func testSignIn_PrintsNativeCredentialFromARunningMock_FirstTimeWithNameAndEmail() throws {
        let server = try CLIProcess.Server(["--port", "0"])
        let url = "http://127.0.0.1:\(try XCTUnwrap(server.port))"
        defer { _ = server.stop() }
        let first = try CLIProcess.run(["sign-in", "--user", "alice", "--client", "com.example.app", "--server", url, "--nonce", "n1"])
        XCTAssertEqual(first.status, 0, first.stderr)
        guard case .object(let credential) = try JSONParser.parse(Array(first.stdout.utf8)) else { return XCTFail(first.stdout) }
        XCTAssertEqual(credential.keys, ["authorizationCode", "email", "fullName", "identityToken", "realUserStatus", "user"])
        XCTAssertEqual(credential["email"], "alice@example.com")
        XCTAssertEqual(credential["fullName"], .object(JSONObject([("familyName", "Appleseed"), ("givenName", "Alice")])))
        XCTAssertEqual(credential["realUserStatus"], 2)
        let token = try CompactJWS.parse(try XCTUnwrap(credential["identityToken"]?.stringValue))
        XCTAssertEqual(token.payloadJSON?["nonce"], "n1")

        let second = try CLIProcess.run(["sign-in", "--user", "alice", "--client", "com.example.app", "--server", url])
        guard case .object(let again) = try JSONParser.parse(Array(second.stdout.utf8)) else { return XCTFail(second.stdout) }
        XCTAssertEqual(again["email"], .null)
        XCTAssertEqual(again["fullName"], .null)
        XCTAssertEqual(again["user"], credential["user"])
    }

    func testSignIn_RejectsBadInput() throws {
        let server = try CLIProcess.Server(["--port", "0"])
        let url = "http://127.0.0.1:\(try XCTUnwrap(server.port))"
        defer { _ = server.stop() }
        let services = try CLIProcess.run(["sign-in", "--user", "alice", "--client", "com.example.web", "--server", url])
        XCTAssertEqual(services.status, 2)
        XCTAssertEqual(services.stderr, #"appleid-mock: the mock answered 400: {"error":"native sign-in needs an App ID (bundle id); \"com.example.web\" is a Services ID","field":"client_id"}"# + "\n")
        XCTAssertEqual(try CLIProcess.run(["sign-in", "--client", "com.example.app", "--server", url]).stderr.split(separator: "\n").first,
                       "appleid-mock: --user is required")
        XCTAssertEqual(try CLIProcess.run(["sign-in", "--user", "a", "--client", "b", "--hide-email", "--share-email"]).status, 2)
        XCTAssertEqual(try CLIProcess.run(["sign-in", "--user", "a", "--client", "b", "--server", "nowhere"]).status, 2)
        XCTAssertEqual(try CLIProcess.run(["sign-in", "--user", "alice", "--client", "com.example.app", "--server", "http://127.0.0.1:1"]).status, 1)
    }

    func testVersion_PrintsTheOneVersion_ByFlagAndCommand() throws {
        for arguments in [["--version"], ["version"]] {
            let result = try CLIProcess.run(arguments)
            XCTAssertEqual(result.status, 0, "\(arguments)")
            XCTAssertEqual(result.stdout, "appleid-mock \(AppleIDMockVersion.current)\n")
        }
        XCTAssertNotNil(AppleIDMockVersion.current.range(of: #"^0\.[0-9]+\.[0-9]+$"#, options: .regularExpression))
        // The twin: it takes no arguments.
        let extra = try CLIProcess.run(["version", "--short"])
        XCTAssertEqual(extra.status, 2)
        XCTAssertEqual(extra.stderr.split(separator: "\n").first, "appleid-mock: unknown option --short")
    }
}
