import JOSE

extension DashboardFragment {
    /// Requests: the journal's newest entries matching the filters, newest first, each with what
    /// the mock answered, why it refused, and the events it caused.
    mutating func requests() {
        guard let requests = snapshot.requests else {
            open("requests", summary: "the request journal is off (serve --journal off)")
            out.raw("</div>\n")
            return
        }
        var summary = requests.entries.isEmpty ? "no request" : "newest \(requests.entries.count)"
        if let route = query.route { summary += " to \(route)" }
        if let client = query.client { summary += " from \(client)" }
        summary += requests.complete ? "" : " among the newest \(Self.count(requests.scanned)) kept"
        summary += " · the dashboard's own requests are left out"
        open("requests", summary: summary)
        guard !requests.entries.isEmpty else {
            out.raw("</div>\n")
            return
        }
        out.raw("<table class=\"grid requests\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">time (UTC)</th><th scope=\"col\">request</th>")
        out.raw("<th scope=\"col\">client_id</th><th scope=\"col\">answer</th><th scope=\"col\">why</th><th scope=\"col\">events caused</th></tr></thead><tbody>")
        for entry in requests.entries { request(entry) }
        out.raw("\n</tbody></table></div>\n")
    }

    /// Most bytes of a `grant_type` or `response_mode` tag: the client chose it, and a row stays a row.
    static let tagLimit = 40

    /// The `response_mode` a sign-in asked for: the form's or the query's on Apple's authorize
    /// endpoint, the JSON body's on `POST /__mock/authorize`; nil when it named none.
    static func responseMode(_ entry: JournalEntry) -> String? {
        switch entry.route ?? entry.path {
        case "/auth/authorize":
            return entry.form?["response_mode"] ?? entry.query["response_mode"]
        case ControlResponse.prefix + "authorize":
            guard let body = entry.body, case .object(let object)? = try? JSONParser.parse(Array(body.utf8)),
                  case .string(let mode)? = object["response_mode"] else { return nil }
            return mode
        default:
            return nil
        }
    }

    private mutating func request(_ entry: JournalEntry) {
        out.raw("\n<tr id=\"request-")
        out.number(entry.id)
        out.raw(entry.isControl ? "\" class=\"control\"><th scope=\"row\">" : "\"><th scope=\"row\">")
        out.number(entry.id)
        out.raw("</th><td>")
        realTime(entry.time)
        out.raw("</td><td>")
        if let method = entry.method, let path = entry.path {
            out.raw("<span class=\"method\">")
            out.text(method.rawValue)
            out.raw("</span> <span class=\"mono\">")
            out.text(path)
            out.raw("</span>")
            if let route = entry.route, route != path {
                out.raw(" <span class=\"dim mono\">")
                out.text(route)
                out.raw("</span>")
            }
            if let grant = entry.grantType ?? Self.responseMode(entry) {
                out.raw(" ")
                tag(LogText.escaped(grant, limit: Self.tagLimit))
            }
        } else {
            out.raw("<span class=\"dim\">no complete request</span>")
        }
        if entry.isTLS { out.raw(" <span class=\"tag\">TLS</span>") }
        out.raw("</td><td class=\"mono\">")
        if let client = entry.clientID { out.text(client) }
        out.raw("</td><td>")
        if let status = entry.status {
            tag(String(status.code), status.code < 400 ? "ok" : status.code < 500 ? "warn" : "bad")
        } else {
            tag("cut off", "bad")
        }
        out.raw("</td><td>")
        if let error = entry.error {
            out.raw("<span class=\"mono error\">")
            out.text(error)
            out.raw("</span> ")
        }
        if let reason = entry.reason {
            out.raw("<span class=\"reason\">")
            out.text(reason)
            out.raw("</span>")
        }
        if let fault = entry.fault {
            out.raw(" <span class=\"tag warn\">fault ")
            out.text(fault)
            out.raw("</span>")
        }
        out.raw("</td><td>")
        for (index, sequence) in entry.events.enumerated() {
            if index > 0 { out.raw(", ") }
            out.raw("<span class=\"event\"><span class=\"dim\">#")
            out.number(sequence)
            out.raw("</span> ")
            out.text(snapshot.eventNames[sequence] ?? "(no longer kept)")
            out.raw("</span>")
        }
        out.raw("</td></tr>")
    }
}
