import FoundationEssentials
import JOSE

/// The outcome of `appleid-mock conformance`: each probe's parts side by side, match or differs,
/// and the knobs that would model each difference.
struct ConformanceReport {
    /// One probe compared.
    struct Outcome {
        /// One compared part, both sides.
        struct Row {
            /// The part's name: `status`, a header's, `body.issuer`, `keys count`, ….
            let name: String
            /// The mock's value; nil when its answer has no such part.
            let mock: String?
            /// Apple's value (or the recording's); nil when absent.
            let apple: String?
            /// Whether both sides agree.
            var same: Bool { mock == apple }
        }

        /// The probe.
        let probe: ConformanceProbe
        /// The mock's answer.
        let mock: ConformanceAnswer
        /// Apple's answer, or the recording's.
        let apple: ConformanceAnswer
        /// Every part either side has, the mock's order first.
        let rows: [Row]
        /// What would make the mock answer as Apple did.
        let knobs: [ConformanceKnob]

        /// Whether every part agrees.
        var matches: Bool { rows.allSatisfy(\.same) }

        /// Compares the two answers to `probe`.
        init(probe: ConformanceProbe, mock: ConformanceAnswer, apple: ConformanceAnswer) {
            self.probe = probe
            self.mock = mock
            self.apple = apple
            let mockParts = ConformanceParts(mock, of: probe)
            let appleParts = ConformanceParts(apple, of: probe)
            var names = mockParts.parts.map(\.name)
            for part in appleParts.parts where !names.contains(part.name) { names.append(part.name) }
            rows = names.map { Row(name: $0, mock: mockParts[$0], apple: appleParts[$0]) }
            let differing = Set(rows.filter { !$0.same }.map(\.name))
            knobs = differing.isEmpty ? [] : ConformanceKnob.knobs(for: probe, mock: mockParts, apple: appleParts, differing: differing)
        }
    }

    /// What the mock side was, in words.
    let mockDescription: String
    /// What the Apple side was, in words.
    let appleDescription: String
    /// Every probe, in order.
    let outcomes: [ConformanceReport.Outcome]

    /// Whether any probe differs.
    var drifted: Bool { outcomes.contains { !$0.matches } }

    /// Every knob suggested, once each, in probe order.
    var knobs: [ConformanceKnob] {
        var knobs: [ConformanceKnob] = []
        for knob in outcomes.flatMap(\.knobs) where !knobs.contains(knob) { knobs.append(knob) }
        return knobs
    }

    /// The report as text: one line per probe; a differing probe's parts side by side, `*` where
    /// they differ, then its knobs.
    func text(suggest: Bool) -> String {
        var lines = ["mock:  \(mockDescription)", "apple: \(appleDescription)", ""]
        let idWidth = outcomes.map(\.probe.id.count).max() ?? 0
        for outcome in outcomes {
            let probe = outcome.probe
            lines.append("\(outcome.matches ? "match  " : "differs") \(pad(probe.id, idWidth))  \(probe.method) \(probe.path)")
            guard !outcome.matches else { continue }
            lines.append("  guards apple-behaviour.md \(probe.guards)")
            let nameWidth = max(4, outcome.rows.map(\.name.count).max() ?? 0)
            let mockWidth = min(48, max(4, outcome.rows.map { ($0.mock ?? absent).count }.max() ?? 0))
            lines.append("    " + pad("part", nameWidth) + "  " + pad("mock", mockWidth) + "  apple")
            for row in outcome.rows {
                let line = "  \(row.same ? " " : "*") " + pad(row.name, nameWidth) + "  " + pad(row.mock ?? absent, mockWidth) + "  " + (row.apple ?? absent)
                lines.append(String(line.reversed().drop { $0 == " " }.reversed()))
            }
            if outcome.knobs.isEmpty {
                lines.append("  knob: none models this; the mock itself would have to change (file an issue)")
            }
            for knob in outcome.knobs { lines.append("  knob: \(knob.description)") }
        }
        let differing = outcomes.filter { !$0.matches }.map(\.probe.id)
        lines.append("")
        lines.append(differing.isEmpty ? "\(outcomes.count) probes: all match"
            : "\(outcomes.count) probes: \(outcomes.count - differing.count) match, \(differing.count) differ (\(differing.joined(separator: ", ")))")
        if suggest {
            lines.append("")
            if let fragment = ConformanceKnob.fragment(knobs) {
                lines.append("suggested scenario fragment (merge it into your scenario file):")
                lines.append(String(JSONWriter.pretty(.object(fragment)).dropLast()))
            } else {
                lines.append(differing.isEmpty ? "nothing to suggest: the mock matches" : "no scenario knob models these differences")
            }
        }
        return lines.joined(separator: "\n")
    }

    private let absent = "(absent)"

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// The report as JSON (`--report FILE`): every probe, its request, each part both sides, the
    /// knobs, and both answers whole.
    func json() -> String {
        var root = JSONObject()
        root["mock"] = .string(mockDescription)
        root["apple"] = .string(appleDescription)
        root["drift"] = .bool(drifted)
        root["probes"] = .array(outcomes.map { outcome in
            var object = JSONObject()
            object["id"] = .string(outcome.probe.id)
            object["guards"] = .string(outcome.probe.guards)
            object["request"] = .object(["method": .string(outcome.probe.method), "path": .string(outcome.probe.path)])
            object["result"] = .string(outcome.matches ? "match" : "differs")
            object["parts"] = .array(outcome.rows.map { row in
                .object(["name": .string(row.name), "mock": row.mock.map(JSONValue.string) ?? .null,
                         "apple": row.apple.map(JSONValue.string) ?? .null, "same": .bool(row.same)])
            })
            object["knobs"] = .array(outcome.knobs.map { .string($0.description) })
            object["mock_answer"] = answer(outcome.mock)
            object["apple_answer"] = answer(outcome.apple)
            return .object(object)
        })
        root["suggested_fragment"] = ConformanceKnob.fragment(knobs).map(JSONValue.object) ?? .null
        return JSONWriter.pretty(.object(root))
    }

    private func answer(_ answer: ConformanceAnswer) -> JSONValue {
        .object(["status": .int(Int64(answer.status)),
                 "headers": .array(answer.headers.map { .array([.string($0.name), .string($0.value)]) }),
                 "body": .string(answer.text)])
    }
}
