@testable import AppleIDMock
import XCTest

/// Pending codes with their expiries indexed (issue 35's relative of P2: the once-a-second look
/// for expired codes went through every pending code under the state lock): every answer is the
/// one a plain dictionary gives, and the index stays bounded as codes are redeemed.
final class PendingCodesTests: XCTestCase {
    private func grant(expiresAt: Int64) -> AuthorizationGrant {
        AuthorizationGrant(clientID: "com.example.app", redirectURI: nil, consentID: 1, teamID: "MOCKTEAM01", userID: "alice", nonce: nil,
                           codeChallenge: nil, codeChallengeMethod: nil, authTime: expiresAt - 300, expiresAt: expiresAt, flow: .native,
                           isFirstAuthorization: false, defect: nil)
    }

    func testPendingCodes_AnswerAsAPlainDictionary_UnderRandomIssuesRedemptionsAndExpiries() {
        var random = SystemRandomNumberGenerator()
        var codes = PendingCodes()
        var plain: [String: AuthorizationGrant] = [:]
        var now: Int64 = 1_000
        for step in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let code = "c\(step)"
                let issued = grant(expiresAt: now + Int64.random(in: 0...600, using: &random))
                codes.insert(code, issued)
                plain[code] = issued
            case 6..<9:
                if let code = plain.keys.randomElement(using: &random) {
                    codes.remove(code)
                    plain[code] = nil
                }
            default:
                now += Int64.random(in: 0...120, using: &random)
                XCTAssertEqual(codes.expiredCount(by: now), plain.values.count { $0.expiresAt <= now })
                codes.removeExpired(by: now)
                plain = plain.filter { $0.value.expiresAt > now }
            }
            XCTAssertEqual(codes.count, plain.count)
        }
        XCTAssertEqual(codes.grants, plain)
    }

    func testPendingCodes_ForgetRedeemedCodesExpiries_WhenNoneExpires() {
        var codes = PendingCodes()
        for index in 0..<50_000 {
            codes.insert("c\(index)", grant(expiresAt: 10_000_000))
            codes.remove("c\(index)")
        }
        XCTAssertEqual(codes.count, 0)
        XCTAssertEqual(codes.expiredCount(by: Int64.max), 0)
        // The twin: a code still pending is found.
        codes.insert("kept", grant(expiresAt: 5))
        XCTAssertEqual(codes.expiredCount(by: 5), 1)
        XCTAssertEqual(codes.expiredCount(by: 4), 0)
    }
}
