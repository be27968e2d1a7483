import Foundation
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Issue 18 point 7, from the outside: the real binary's stderr says why for each kind of refused
/// request, one line each in order, while Apple's answer stays Apple's, byte for byte.
final class RefusalStderrCLITests: XCTestCase {
    private func secret(_ client: String) throws -> String {
        let minted = try CLIProcess.run(["client-secret", "--client", client])
        XCTAssertEqual(minted.status, 0, minted.stderr)
        return minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testServe_WritesOneReasonLinePerRefusalKind_AndApplesBodiesStayApples() throws {
        let server = try CLIProcess.Server(["--port", "0"])
        let port = try XCTUnwrap(server.port, server.firstLine)
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        func token(_ fields: [(String, String)]) throws -> RawHTTPResponse {
            try RawHTTPClient(port: port).roundTrip("POST", "/auth/token", headers: form, body: Array(HTTPForm.encode(fields).utf8))
        }
        let app = try secret("com.example.app")
        let web = try secret("com.example.web")
        let bogusCode = "c0000000000000000000000000000000.0.nope.nope"
        // (request, Apple's body, the reason line)
        let cases: [(RawHTTPResponse, String, String)] = [
            (try token([("grant_type", "authorization_code"), ("code", bogusCode)]),
             #"{"error":"invalid_client"}"#, "invalid_client — client_id missing"),
            (try token([("client_id", "com.example.nope"), ("client_secret", app), ("grant_type", "authorization_code"), ("code", bogusCode)]),
             #"{"error":"invalid_client"}"#, "invalid_client — client_id com.example.nope is not a client in the scenario"),
            (try token([("client_id", "com.example.app"), ("grant_type", "authorization_code"), ("code", bogusCode)]),
             #"{"error":"invalid_client"}"#, "invalid_client — client_secret missing"),
            (try token([("client_id", "com.example.app"), ("client_secret", "not-a-jwt"), ("grant_type", "authorization_code"), ("code", bogusCode)]),
             #"{"error":"invalid_client"}"#, "invalid_client — client_secret is not a JWT (malformed JWS: expected 3 segments, found 1)"),
            (try token([("client_id", "com.example.app"), ("client_secret", web), ("grant_type", "authorization_code"), ("code", bogusCode)]),
             #"{"error":"invalid_client"}"#, "invalid_client — client_secret sub is com.example.web but client_id is com.example.app"),
            (try token([("client_id", "com.example.app"), ("client_secret", app), ("grant_type", "authorization_code"), ("code", bogusCode)]),
             #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#,
             "invalid_grant — code unknown: not a code this mock issued"),
            (try token([("client_id", "com.example.app"), ("client_secret", app), ("grant_type", "password")]),
             #"{"error":"unsupported_grant_type"}"#,
             "unsupported_grant_type — grant_type password is not authorization_code, refresh_token or client_credentials"),
        ]
        // The accepted twin: a good secret and a real code say nothing.
        let signIn = try CLIProcess.run(["sign-in", "--user", "alice", "--client", "com.example.app", "--server", "http://127.0.0.1:\(port)"])
        XCTAssertEqual(signIn.status, 0, signIn.stderr)
        let code = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(signIn.stdout.utf8)) as? [String: Any])["authorizationCode"] as? String
        XCTAssertEqual(try token([("client_id", "com.example.app"), ("client_secret", app), ("grant_type", "authorization_code"),
                                  ("code", try XCTUnwrap(code))]).status, 200)
        // Apple's error page for a redirect_uri it does not know.
        let page = try RawHTTPClient(port: port).roundTrip(
            "GET", "/auth/authorize?client_id=com.example.web&redirect_uri=https://evil.example/cb&response_type=code")
        XCTAssertEqual(page.status, 400)
        XCTAssertFalse(page.text.contains("evil.example/cb is not registered"), "the developer's reason leaked into Apple's page")

        let stopped = server.stop()
        XCTAssertEqual(stopped.status, 0)
        var expected = cases.map { "appleid-mock: refused POST /auth/token: \($0.2)" }
        expected.append("appleid-mock: refused GET /auth/authorize: invalid_request — redirect_uri https://evil.example/cb is not registered "
                        + "for com.example.web (registered: https://app.example.com/callback http://localhost:3000/callback)")
        XCTAssertEqual(stopped.stderr.split(separator: "\n").map(String.init), expected)
        for (response, body, reason) in cases {
            XCTAssertEqual(response.status, 400, reason)
            XCTAssertEqual(response.text, body, reason)
            XCTAssertEqual(response.headers["Content-Type"], "application/json;charset=UTF-8", reason)
        }
    }
}
