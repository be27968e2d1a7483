extension DashboardFragment {
    /// Retired keys listed at most (the newest); published and signing ones are always listed.
    static let retiredKeyLimit = 20

    /// Keys: every published key with its state and dates, the newest retired ones, and the
    /// rotation, activation and retirement the control API offers.
    mutating func keys() {
        let keys = snapshot.world.keys
        let live = keys.filter { $0.state != .retired }.reversed()
        let retired = keys.filter { $0.state == .retired }.reversed()
        let signing = snapshot.world.signingKey?.keyID
        open("keys", summary: "\(live.count) published at /auth/keys, \(retired.count) retired · signing: \(signing ?? "none")")
        out.raw("<p class=\"toolbar\">")
        action("Rotate", method: "POST", path: "/__mock/keys/rotate", body: nil, test: "rotate")
        out.raw(" ")
        action("Publish a new key", method: "POST", path: "/__mock/keys", body: [:], test: "publish", kind: "secondary")
        out.raw("</p><table class=\"grid keys\"><thead><tr><th scope=\"col\">kid</th><th scope=\"col\">state</th><th scope=\"col\">published</th>")
        out.raw("<th scope=\"col\">signing since</th><th scope=\"col\">retired</th><th scope=\"col\">actions</th></tr></thead><tbody>")
        for record in live { key(record) }
        for record in retired.prefix(Self.retiredKeyLimit) { key(record) }
        out.raw("\n</tbody></table>")
        if retired.count > Self.retiredKeyLimit {
            out.raw("<p class=\"dim\">")
            out.number(retired.count - Self.retiredKeyLimit)
            out.raw(" older retired keys not shown (GET /__mock/keys lists them).</p>")
        }
        out.raw("</div>\n")
    }

    private mutating func key(_ record: KeyRecord) {
        out.raw("\n<tr id=\"key-")
        out.text(record.keyID)
        out.raw(record.state == .retired ? "\" class=\"retired\"><th scope=\"row\" class=\"mono\">" : "\"><th scope=\"row\" class=\"mono\">")
        out.text(record.keyID)
        out.raw("</th><td>")
        switch record.state {
        case .active: tag("active · signs", "ok")
        case .published: tag("published")
        case .retired: tag("retired", "bad")
        }
        out.raw("</td><td>")
        mockTime(record.publishedAt)
        out.raw("</td><td>")
        if let activated = record.activatedAt { mockTime(activated) } else { out.raw("<span class=\"dim\">—</span>") }
        out.raw("</td><td>")
        if let retired = record.retiredAt { mockTime(retired) } else { out.raw("<span class=\"dim\">—</span>") }
        out.raw("</td><td>")
        if record.state == .published {
            let path = "/__mock/keys/" + Self.segment(record.keyID)
            action("Activate", method: "POST", path: path + "/activate", body: nil, test: "activate-" + record.keyID, kind: "small")
            out.raw(" ")
            action("Retire", method: "DELETE", path: path, body: nil, test: "retire-" + record.keyID,
                   confirm: "Retire key \(record.keyID)? The tokens it signed stop verifying.", kind: "danger small")
        }
        out.raw("</td></tr>")
    }
}
