import JOSE

/// What `appleid-mock audit` found: a row per check (check, expected, seen, verdict), as a
/// table or as JSON (`--json`), and whether anything failed (exit 1).
struct AuditReport {
    /// One check's outcome.
    struct Row {
        let check: String
        let expected: String
        let seen: String
        let verdict: Verdict
    }

    /// A check's verdict; only `failed` fails the audit.
    enum Verdict: String {
        case passed = "ok"
        case failed = "FAIL"
        case skipped = "skipped"
    }

    /// The backend audited and what counted as accepting.
    let target: String
    let accepted: String
    private(set) var rows: [Row] = []
    /// Why the audit stopped early, when it did.
    private(set) var stopped: String?

    init(target: String, accepted: String) {
        self.target = target
        self.accepted = accepted
    }

    /// Whether any check failed.
    var failed: Bool { rows.contains { $0.verdict == .failed } }

    mutating func add(_ row: Row) { rows.append(row) }

    mutating func add(_ check: String, expected: String, seen: String, pass: Bool) {
        rows.append(Row(check: check, expected: expected, seen: seen, verdict: pass ? .passed : .failed))
    }

    /// Ends the audit with `reason` (shown under the table).
    mutating func stop(_ reason: String) { stopped = reason }

    /// The human table.
    func table() -> String {
        let header = ["check", "expected", "seen", "verdict"]
        let cells = [header] + rows.map { [$0.check, $0.expected, $0.seen, $0.verdict.rawValue] }
        let widths = header.indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
        func line(_ row: [String]) -> String {
            zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
        }
        var out = ["audit of \(target) (accepted means: \(accepted))", line(header), line(widths.map { String(repeating: "-", count: $0) })]
        out += rows.map { line([$0.check, $0.expected, $0.seen, $0.verdict.rawValue]) }
        if let stopped { out.append("stopped: \(stopped)") }
        let failures = rows.filter { $0.verdict == .failed }.count
        out.append(failures == 0 ? "every check passed" : "\(failures) of \(rows.count) checks failed")
        return out.joined(separator: "\n")
    }

    /// `{"target", "accepted", "checks": [{"check","expected","seen","verdict"}], "stopped", "failed"}`.
    func json() -> String {
        var object = JSONObject()
        object["target"] = .string(target)
        object["accepted"] = .string(accepted)
        object["checks"] = .array(rows.map { row in
            .object(["check": .string(row.check), "expected": .string(row.expected), "seen": .string(row.seen), "verdict": .string(row.verdict.rawValue)])
        })
        object["stopped"] = stopped.map(JSONValue.string) ?? .null
        object["failed"] = .bool(failed)
        return String(decoding: JSONWriter.sortedCompact(.object(object)), as: UTF8.self)
    }
}
