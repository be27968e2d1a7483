import Foundation
import JOSE
import MiniHTTP
import XCTest

/// What the sign-in helpers send and how they read the answers, written once for both doors: the
/// async helpers on any `MockClient` (in memory or live, `MockClient+Apple.swift`) and the
/// synchronous ones on a live `AppleIDMockServer` (`ProtocolFixtures.swift`). Each of those only
/// carries these requests over its own transport.
enum SignInRequests {
    /// `POST /__mock/authorize`'s body; nil fields are left out.
    static func headlessAuthorize(clientID: String, redirectURI: String, responseType: String, responseMode: String, scope: String?,
                                  state: String?, nonce: String?, user: String, hideEmail: Bool?, codeChallenge: String?,
                                  codeChallengeMethod: String?) -> String {
        var body = JSONObject()
        body["client_id"] = .string(clientID)
        body["redirect_uri"] = .string(redirectURI)
        body["response_type"] = .string(responseType)
        body["response_mode"] = .string(responseMode)
        if let scope { body["scope"] = .string(scope) }
        if let state { body["state"] = .string(state) }
        if let nonce { body["nonce"] = .string(nonce) }
        if let codeChallenge { body["code_challenge"] = .string(codeChallenge) }
        if let codeChallengeMethod { body["code_challenge_method"] = .string(codeChallengeMethod) }
        body["user"] = .string(user)
        if let hideEmail { body["hide_email"] = .bool(hideEmail) }
        return jsonText(body)
    }

    /// The form or redirect parameters a `POST /__mock/authorize` answer delivers; fails the test
    /// unless it is a 200.
    static func delivered(status: Int, body: [UInt8], responseMode: String, file: StaticString, line: UInt) throws -> [String: String] {
        XCTAssertEqual(status, 200, String(decoding: body, as: UTF8.self), file: file, line: line)
        let answer = try jsonObject(body, file: file, line: line)
        var fields: [String: String] = [:]
        if answer["method"] == "POST" {
            for (name, value) in try XCTUnwrap(answer["form"]?.objectValue, file: file, line: line) { fields[name] = value.stringValue }
        } else {
            let url = try XCTUnwrap(answer["url"]?.stringValue, file: file, line: line)
            let separator: Character = responseMode == "fragment" ? "#" : "?"
            let encoded = url.split(separator: separator, maxSplits: 1).last.map(String.init) ?? ""
            for (name, value) in formPairs(encoded) { fields[name] = value }
        }
        return fields
    }

    /// `POST /auth/token`'s form for `grant_type=authorization_code`; nil parameters are left out.
    static func redeem(code: String, clientID: String, secret: String, redirectURI: String?, verifier: String?) -> [(String, String)] {
        var pairs: [(String, String)] = [("client_id", clientID), ("client_secret", secret), ("code", code), ("grant_type", "authorization_code")]
        if let redirectURI { pairs.append(("redirect_uri", redirectURI)) }
        if let verifier { pairs.append(("code_verifier", verifier)) }
        return pairs
    }

    /// `POST /auth/token`'s form for `grant_type=refresh_token`.
    static func refresh(token: String, clientID: String, secret: String) -> [(String, String)] {
        [("client_id", clientID), ("client_secret", secret), ("grant_type", "refresh_token"), ("refresh_token", token)]
    }

    /// `POST /auth/token`'s form for `grant_type=client_credentials`.
    static func clientCredentials(clientID: String, secret: String, scope: String?) -> [(String, String)] {
        var pairs = [("client_id", clientID), ("client_secret", secret), ("grant_type", "client_credentials")]
        if let scope { pairs.append(("scope", scope)) }
        return pairs
    }

    /// `POST /auth/revoke`'s form.
    static func revoke(token: String, clientID: String, secret: String, hint: String?) -> [(String, String)] {
        var pairs = [("client_id", clientID), ("client_secret", secret), ("token", token)]
        if let hint { pairs.append(("token_type_hint", hint)) }
        return pairs
    }

    /// `POST /__mock/sign-in`'s body; nil fields are left out.
    static func nativeSignIn(user: String, clientID: String, scopes: [String]?, nonce: String?, hideEmail: Bool?) -> String {
        var body = JSONObject()
        body["user"] = .string(user)
        body["client_id"] = .string(clientID)
        if let scopes { body["scopes"] = .array(scopes.map(JSONValue.string)) }
        if let nonce { body["nonce"] = .string(nonce) }
        if let hideEmail { body["hide_email"] = .bool(hideEmail) }
        return jsonText(body)
    }

    /// Verifies an id_token's RS256 signature under the key `key` finds for its `kid`, and its
    /// header's bytes; returns its payload bytes as text.
    static func verifiedPayload(_ token: String?, key: (String) throws -> RSAPublicKey?, file: StaticString, line: UInt) throws -> String {
        let jws = try CompactJWS.parse(try XCTUnwrap(token, "no id_token", file: file, line: line))
        let keyID = try XCTUnwrap(jws.keyID, file: file, line: line)
        let publicKey = try XCTUnwrap(try key(keyID), "\(keyID) is not published", file: file, line: line)
        XCTAssertTrue(jws.verifyRS256(with: publicKey), "id_token signature does not verify", file: file, line: line)
        XCTAssertEqual(jws.headerSegment, Base64URL.encode(Array(#"{"kid":"\#(keyID)","alg":"RS256"}"#.utf8)), file: file, line: line)
        return String(decoding: jws.payload, as: UTF8.self)
    }
}
