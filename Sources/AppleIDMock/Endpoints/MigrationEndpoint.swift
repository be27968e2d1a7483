import JOSE
import MiniHTTP

/// `POST /auth/usermigrationinfo` (apple-behaviour.md §8), authorized by `Authorization: Bearer`.
struct MigrationEndpoint: Sendable {
    let domain: AppleIDDomain

    func handle(_ request: HTTPRequest) throws -> HTTPResponse {
        var bearer: String?
        if let header = request.headers["Authorization"], header.utf8.count >= 7, header.utf8.prefix(7).lazy.map(Self.lowercased).elementsEqual("bearer ".utf8) {
            bearer = String(header.dropFirst(7)).trimmingSpaces
        }
        let form = try AppleForm.fields(request, domain.scenario.compatibility)
        let answer = try domain.userMigrationInfo(MigrationRequest(clientID: form["client_id"], clientSecret: form["client_secret"], bearer: bearer,
                                                                   subject: form["sub"], target: form["target"], transferSubject: form["transfer_sub"]))
        return AppleResponse.noStoreJSON(.object(Self.json(answer)))
    }

    /// Apple's answer: `transfer_sub` to the sending team; `sub` (with the team's own relay
    /// address and `is_private_email` when the user hid theirs) to the receiving one.
    static func json(_ answer: MigrationAnswer) -> JSONObject {
        var object = JSONObject()
        switch answer {
        case .transferSubject(let subject):
            object["transfer_sub"] = .string(subject)
        case .subject(let subject, let relayEmail):
            object["sub"] = .string(subject)
            if let relayEmail {
                object["email"] = .string(relayEmail)
                object["is_private_email"] = true
            }
        }
        return object
    }

    /// An ASCII letter lower-cased; every other byte as it is.
    private static func lowercased(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
}

extension String {
    /// Without leading and trailing spaces.
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
