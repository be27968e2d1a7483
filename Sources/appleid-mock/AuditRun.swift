import AppleIDMock
import JOSE
import MiniHTTP

/// One audit (`appleid-mock audit`): the checks in order, each a sign-in at the mock delivered to
/// the backend, judged by its answer and, where it says so, by the mock's request journal. The
/// faults it installs at the mock are its own and removed before it ends, whatever happens.
struct AuditRun {
    /// Every defect, in the order they are tried.
    static let defects = TokenDefectNames.all

    let mock: ControlClient
    let target: any AuditTarget
    let accepted: AuditAcceptance

    /// Runs every check; throws only when the mock itself cannot be used (exit 1 or 2).
    func run() throws -> AuditReport {
        var report = AuditReport(target: target.description, accepted: accepted.description)
        var installed: [String] = []
        defer { for id in installed { _ = try? mock.send("DELETE", "/__mock/faults/\(id)") } }

        // A genuine sign-in: without its acceptance no refusal below means anything.
        let mark = try journalMark()
        let genuine = try target.attempt(defect: nil)
        report.add("a genuine sign-in", expected: "accepted", seen: genuine.summary, pass: isAccepted(genuine) == true)
        guard isAccepted(genuine) == true else {
            report.stop("the backend refused a genuine sign-in, so no refusal below could be told from it")
            return report
        }
        let exchange = try codeExchange(genuine.code, after: mark)
        report.add(exchange)

        // A rotation: the old key retired, a new kid the backend has not seen.
        report.add(try rotation())

        for defect in Self.defects where target.applies(defect) {
            let attempt = try target.attempt(defect: defect)
            // A backend that does not answer accepts nobody: only an acceptance fails the check.
            report.add("id_token: \(defect)", expected: "refused", seen: attempt.summary, pass: isAccepted(attempt) != true)
        }

        // Apple down: a 503 from /auth/token, then a broken /auth/keys (after a rotation, so the
        // backend must fetch it). Nobody signs in meanwhile; afterwards everyone does again.
        if exchange.verdict == .passed {
            let fault = try install(["method": "POST", "path": "/auth/token", "action": "respond", "status": 503,
                                     "headers": .object(["Content-Type": "text/html; charset=utf-8"]),
                                     "body": "<html><body><h1>503 Service Unavailable</h1></body></html>"])
            installed.append(fault)
            let attempt = try target.attempt(defect: nil)
            report.add("/auth/token answers 503", expected: "refused", seen: attempt.summary, pass: isAccepted(attempt) != true)
            _ = try mock.send("DELETE", "/__mock/faults/\(fault)")
        } else {
            report.add(AuditReport.Row(check: "/auth/token answers 503", expected: "refused", seen: "not checked: the backend does not exchange codes",
                                       verdict: .skipped))
        }
        _ = try mock.call("POST", "/__mock/keys/rotate")
        let broken = try install(["method": "GET", "path": "/auth/keys", "action": "respond", "status": 200,
                                  "headers": .object(["Content-Type": "application/json;charset=UTF-8"]), "body": #"{"keys": [{"kty": "RSA", "kid": "#])
        installed.append(broken)
        let outage = try target.attempt(defect: nil)
        report.add("/auth/keys answers broken JSON (new kid)", expected: "refused", seen: outage.summary, pass: isAccepted(outage) != true)
        _ = try mock.send("DELETE", "/__mock/faults/\(broken)")
        let after = try target.attempt(defect: nil)
        report.add("a genuine sign-in once Apple is back", expected: "accepted", seen: after.summary, pass: isAccepted(after) == true)
        return report
    }

    // MARK: - Checks

    /// The code of an accepted sign-in went to `/auth/token`, and Apple took the exchange: a valid
    /// client_secret, the same redirect_uri (and PKCE verifier) as the authorize request.
    private func codeExchange(_ code: String, after mark: UInt64) throws -> AuditReport.Row {
        let check = "the authorization code is exchanged at /auth/token"
        let expected = "exchanged once, with a valid client_secret and redirect_uri"
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

    /// After a rotation (the old signing key retired) the backend meets a kid it has not seen: it
    /// must fetch `/auth/keys` again, and accept.
    private func rotation() throws -> AuditReport.Row {
        let check = "after a key rotation"
        let expected = "fetches /auth/keys again and accepts"
        let mark = try journalMark()
        let text = try mock.call("POST", "/__mock/keys/rotate")
        if let previous = (try? JSONParser.parse(Array(text.utf8)))?.objectValue?["previous"]?.stringValue {
            _ = try mock.send("DELETE", "/__mock/keys/\(previous)")
        }
        let attempt = try target.attempt(defect: nil)
        let acceptedAgain = isAccepted(attempt) == true
        guard let fetches = try journal("method=GET&path=/auth/keys&control=false&after=\(mark)") else {
            return AuditReport.Row(check: check, expected: expected, seen: attempt.summary + "; /auth/keys not checked: the mock's journal is off",
                                   verdict: acceptedAgain ? .skipped : .failed)
        }
        let seen = "\(attempt.summary); /auth/keys fetched \(fetches.count) times"
        return AuditReport.Row(check: check, expected: expected, seen: seen, verdict: acceptedAgain && !fetches.isEmpty ? .passed : .failed)
    }

    // MARK: - The mock

    /// Installs a fault; its id.
    private func install(_ fault: JSONObject) throws -> String {
        let text = try mock.call("POST", "/__mock/faults", body: fault)
        guard let id = (try? JSONParser.parse(Array(text.utf8)))?.objectValue?["id"]?.stringValue else {
            throw CommandFailure(message: "the mock's /__mock/faults answered no id: \(text)", status: 1)
        }
        return id
    }

    /// The newest journal id, so that later reads see only what came after.
    private func journalMark() throws -> UInt64 {
        let (status, text) = try mock.send("GET", "/__mock/requests?limit=1&path=/&control=true")
        guard status == 200, case .object(let answer)? = try? JSONParser.parse(Array(text.utf8)), let newest = answer["newest"]?.intValue else { return 0 }
        return UInt64(clamping: newest)
    }

    /// The journal entries matching `query`; nil when the mock's journal is off.
    private func journal(_ query: String) throws -> [JSONObject]? {
        let (status, text) = try mock.send("GET", "/__mock/requests?" + query)
        if status == 409 { return nil }
        guard status == 200, case .object(let answer)? = try? JSONParser.parse(Array(text.utf8)), let list = answer["requests"]?.arrayValue else {
            throw CommandFailure(message: "the mock's journal answered \(status): \(text)", status: 1)
        }
        return list.compactMap(\.objectValue)
    }

    /// Whether the backend accepted; nil when it did not answer (which accepts nobody).
    private func isAccepted(_ attempt: AuditAttempt) -> Bool? {
        guard case .success(let response)? = attempt.result else { return nil }
        return accepted.accepts(response)
    }
}

/// The defects' names, as the mock's `POST /__mock/tokens` takes them.
enum TokenDefectNames {
    static let all = TokenDefect.names
}
