import JOSE

extension DashboardFragment {
    /// Notifications: the newest records of the delivery log, a row per attempt, with the
    /// receiver's answer and the JWT's claims decoded.
    mutating func notifications() {
        guard let records = snapshot.notifications else {
            open("notifications", summary: "no delivery log")
            out.raw("</div>\n")
            return
        }
        let summary = records.isEmpty ? "no notification yet: an account event (revoke consent, delete account, relay) sends one"
            : "newest \(records.count) of the delivery log, newest first"
        open("notifications", summary: summary)
        guard !records.isEmpty else {
            out.raw("</div>\n")
            return
        }
        out.raw("<table class=\"grid notifications\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">event</th><th scope=\"col\">user</th>")
        out.raw("<th scope=\"col\">sent to</th><th scope=\"col\">attempt</th><th scope=\"col\">at (mock time)</th><th scope=\"col\">answer</th>")
        out.raw("<th scope=\"col\">outcome</th><th scope=\"col\">JWT</th></tr></thead>")
        for record in records { notification(record) }
        out.raw("\n</table></div>\n")
    }

    private mutating func notification(_ record: NotificationRecord) {
        let rows = max(1, record.attempts.count)
        let id = String(record.id)
        out.raw("\n<tbody id=\"notification-")
        out.text(id)
        out.raw("\">")
        for index in 0..<rows {
            out.raw("<tr data-test=\"attempt-")
            out.text(id)
            out.raw("-")
            out.number(index + 1)
            out.raw("\">")
            if index == 0 {
                out.raw("<th scope=\"rowgroup\"")
                span(rows)
                out.raw(">")
                out.text(id)
                out.raw("</th><td")
                span(rows)
                out.raw(">")
                tag(record.type)
                out.raw("</td><td class=\"mono\"")
                span(rows)
                out.raw(">")
                out.text(record.userID)
                out.raw("</td><td class=\"mono url\"")
                span(rows)
                out.raw(">")
                if let url = record.url { out.text(url) } else { out.raw("<span class=\"dim\">no notification URL</span>") }
                out.raw("</td>")
            }
            if record.attempts.indices.contains(index) {
                let attempt = record.attempts[index]
                out.raw("<td>")
                out.number(index + 1)
                out.raw("</td><td>")
                mockTime(Int64(seconds: attempt.at))
                out.raw("</td><td>")
                if let status = attempt.status {
                    tag(String(status), (200..<300).contains(status) ? "ok" : "bad")
                }
                if let error = attempt.error {
                    out.raw(" <span class=\"error\">")
                    out.text(error)
                    out.raw("</span>")
                }
                out.raw("</td>")
            } else {
                out.raw("<td class=\"dim\">—</td><td class=\"dim\">—</td><td class=\"dim\">—</td>")
            }
            if index == 0 {
                out.raw("<td")
                span(rows)
                out.raw(">")
                switch record.outcome {
                case .delivered: tag(record.outcome.rawValue, "ok")
                case .pending: tag(record.outcome.rawValue, "warn")
                case .failed, .dropped, .abandoned: tag(record.outcome.rawValue, "bad")
                case .noURL: tag(record.outcome.rawValue)
                }
                if let fault = record.fault {
                    out.raw(" <span class=\"dim\">fault ")
                    out.text(fault)
                    out.raw("</span>")
                }
                out.raw("</td><td")
                span(rows)
                out.raw(">")
                claims(record)
                out.raw("</td>")
            }
            out.raw("</tr>")
        }
        out.raw("</tbody>")
    }

    /// ` rowspan="N"` for a cell beside `rows` attempts (nothing for one).
    private mutating func span(_ rows: Int) {
        guard rows > 1 else { return }
        out.raw(" rowspan=\"")
        out.number(rows)
        out.raw("\"")
    }

    /// The JWT's claims, its `events` JSON string decoded and its times also in RFC 3339, and the
    /// key that signed it, folded away (`GET /__mock/notifications` has the JWT itself).
    private mutating func claims(_ record: NotificationRecord) {
        out.raw("<details id=\"jwt-")
        out.number(record.id)
        out.raw("\"><summary>claims</summary><dl class=\"claims\">")
        for (name, value) in record.claims {
            out.raw("<dt>")
            out.text(name)
            out.raw("</dt><dd>")
            if name == "events", case .string(let text) = value, case .object(let event)? = try? JSONParser.parse(Array(text.utf8)) {
                out.raw("<span class=\"dim\">a JSON string:</span><dl>")
                for (member, inner) in event {
                    out.raw("<dt>")
                    out.text(member)
                    out.raw("</dt><dd>")
                    claim(inner)
                    out.raw("</dd>")
                }
                out.raw("</dl>")
            } else {
                claim(value)
                if name == "iat" || name == "exp", case .int(let seconds) = value {
                    out.raw(" <span class=\"dim\">")
                    out.text(RFC3339.format(seconds))
                    out.raw("</span>")
                }
            }
            out.raw("</dd>")
        }
        out.raw("</dl>")
        if let jwt = record.jwt {
            out.raw("<p class=\"dim\">RS256, kid ")
            out.text((try? CompactJWS.parse(jwt))?.keyID ?? "?")
            out.raw("</p>")
        } else {
            out.raw("<p class=\"dim\">not signed yet: signed at its first attempt</p>")
        }
        out.raw("</details>")
    }

    private mutating func claim(_ value: JSONValue) {
        out.raw("<code>")
        if case .string(let text) = value {
            out.text(text)
        } else {
            out.text(bytes: JSONWriter.compact(value))
        }
        out.raw("</code>")
    }
}
