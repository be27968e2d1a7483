import JOSE
import MiniHTTP

/// One audit of a native backend (`appleid-mock audit --native`): the checks in order, each a
/// sign-in at the mock, a delivery to the backend and, where it says so, the mock's journal.
struct AuditRun {
    /// The defects a native backend must refuse. `nonce-mismatch` is left out: an app's backend
    /// gets no nonce of its own to compare.
    static let defects = ["expired", "not-yet-valid", "wrong-issuer", "wrong-audience", "bad-signature", "unknown-kid", "alg-none",
                          "hs256-public-key", "missing-sub", "retired-key", "iat-far-past"]

    let mock: ControlClient
    let backend: AuditNativeBackend
    let accepted: AuditAcceptance
    let clientID: String
    let user: String?

    /// Runs every check; throws only when the mock itself cannot be used (exit 1 or 2).
    func run() throws -> AuditReport {
        var report = AuditReport(target: backend.url, accepted: accepted.description)
        let user = try self.user ?? firstUser()
        let mark = try journalMark()
        let genuine = try signIn(user)
        let answer = deliver(genuine.identityToken, genuine)
        let baseline = isAccepted(answer)
        report.add("a genuine sign-in", expected: "accepted", seen: answer.summary, pass: baseline == true)
        guard baseline == true else {
            report.stop("the backend refused a genuine sign-in, so no refusal below could be told from it")
            return report
        }
        report.add(try codeExchange(genuine.authorizationCode, after: mark))
        for defect in Self.defects {
            let credential = try signIn(user)
            let forged = try forge(user: user, defect: defect)
            let answer = deliver(forged, credential)
            // A backend that does not answer accepts nobody: only an acceptance fails the check.
            report.add("identityToken: \(defect)", expected: "refused", seen: answer.summary, pass: isAccepted(answer) != true)
        }
        report.add(try rotation(user))
        return report
    }

    // MARK: - Checks

    /// The code of an accepted sign-in went to `/auth/token` with a client_secret Apple takes.
    private func codeExchange(_ code: String, after mark: UInt64) throws -> AuditReport.Row {
        let check = "the authorization code is exchanged at /auth/token"
        let expected = "exchanged once, with a valid client_secret"
        guard let entries = try journal("path=/auth/token&grant_type=authorization_code&after=\(mark)") else {
            return AuditReport.Row(check: check, expected: expected, seen: "not checked: the mock's journal is off", verdict: .skipped)
        }
        let exchanges = entries.filter { $0["form"]?.objectValue?["code"]?.stringValue == code }
        guard let exchange = exchanges.first else {
            return AuditReport.Row(check: check, expected: expected, seen: "never exchanged", verdict: .failed)
        }
        let status = exchange["status"]?.intValue ?? 0
        guard status == 200 else {
            let why = exchange["reason"]?.stringValue ?? exchange["error"]?.stringValue ?? "status \(status)"
            return AuditReport.Row(check: check, expected: expected, seen: "refused by Apple: \(why)", verdict: .failed)
        }
        return AuditReport.Row(check: check, expected: expected, seen: exchanges.count == 1 ? "exchanged once" : "exchanged \(exchanges.count) times",
                               verdict: .passed)
    }

    /// After a rotation the backend meets a kid it has not seen: it must fetch `/auth/keys` again.
    private func rotation(_ user: String) throws -> AuditReport.Row {
        let check = "after a key rotation"
        let expected = "fetches /auth/keys again and accepts"
        let mark = try journalMark()
        _ = try mock.call("POST", "/__mock/keys/rotate")
        let credential = try signIn(user)
        let answer = deliver(credential.identityToken, credential)
        let acceptedAgain = isAccepted(answer) == true
        guard let fetches = try journal("method=GET&path=/auth/keys&control=false&after=\(mark)") else {
            return AuditReport.Row(check: check, expected: expected, seen: answer.summary + "; /auth/keys not checked: the mock's journal is off",
                                   verdict: acceptedAgain ? .skipped : .failed)
        }
        let seen = "\(answer.summary); /auth/keys fetched \(fetches.count) times"
        return AuditReport.Row(check: check, expected: expected, seen: seen, verdict: acceptedAgain && !fetches.isEmpty ? .passed : .failed)
    }

    // MARK: - The mock

    private struct Credential {
        let user: String
        let identityToken: String
        let authorizationCode: String
    }

    private func signIn(_ user: String) throws -> Credential {
        let text = try mock.call("POST", "/__mock/sign-in", body: ["user": .string(user), "client_id": .string(clientID)])
        guard case .object(let answer)? = try? JSONParser.parse(text), let token = answer["identityToken"]?.stringValue,
              let code = answer["authorizationCode"]?.stringValue, let sub = answer["user"]?.stringValue else {
            throw CommandFailure(message: "the mock's /__mock/sign-in answered no credential: \(text)", status: 1)
        }
        return Credential(user: sub, identityToken: token, authorizationCode: code)
    }

    private func forge(user: String, defect: String) throws -> String {
        let text = try mock.call("POST", "/__mock/tokens", body: ["user": .string(user), "client_id": .string(clientID), "defect": .string(defect)])
        guard case .object(let answer)? = try? JSONParser.parse(text), let token = answer["id_token"]?.stringValue else {
            throw CommandFailure(message: "the mock's /__mock/tokens answered no id_token for \(defect): \(text)", status: 1)
        }
        return token
    }

    private func firstUser() throws -> String {
        let text = try mock.call("GET", "/__mock/users")
        guard case .object(let answer)? = try? JSONParser.parse(text), let first = answer["users"]?.arrayValue?.first?.objectValue?["id"]?.stringValue else {
            throw CommandFailure(message: "the mock has no user to sign in (pass --user)", status: 1)
        }
        return first
    }

    /// The newest journal id, so that later reads see only what came after.
    private func journalMark() throws -> UInt64 {
        let (status, text) = try mock.send("GET", "/__mock/requests?limit=1&after=18446744073709551615")
        guard status == 200, case .object(let answer)? = try? JSONParser.parse(text), let last = answer["last"]?.intValue else { return 0 }
        return UInt64(clamping: last)
    }

    /// The journal entries matching `query`; nil when the mock's journal is off.
    private func journal(_ query: String) throws -> [JSONObject]? {
        let (status, text) = try mock.send("GET", "/__mock/requests?" + query)
        if status == 409 { return nil }
        guard status == 200, case .object(let answer)? = try? JSONParser.parse(text), let list = answer["requests"]?.arrayValue else {
            throw CommandFailure(message: "the mock's journal answered \(status): \(text)", status: 1)
        }
        return list.compactMap(\.objectValue)
    }

    // MARK: - The backend

    private func deliver(_ identityToken: String, _ credential: Credential) -> Answer {
        Answer(result: backend.deliver(identityToken: identityToken, authorizationCode: credential.authorizationCode, user: credential.user))
    }

    /// Whether the backend accepted; nil when it did not answer (which accepts nobody).
    private func isAccepted(_ answer: Answer) -> Bool? {
        guard case .success(let response) = answer.result else { return nil }
        return accepted.accepts(response)
    }

    /// What the backend answered, for the report.
    struct Answer {
        let result: Result<HTTPClient.Response, HTTPClient.Failure>

        var summary: String {
            switch result {
            case .success(let response): "\(response.status)"
            case .failure(let failure): "no answer (\(failure))"
            }
        }
    }
}
