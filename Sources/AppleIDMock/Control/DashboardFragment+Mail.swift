extension DashboardFragment {
    /// Mail: what the SMTP port (Apple's Private Email Relay) received, newest first, with the
    /// relay's verdict on every recipient and where forwarded mail went on to.
    mutating func mail() {
        guard let records = snapshot.mail else {
            open("mail", summary: "no SMTP port: start the mock with --smtp-port PORT to receive mail as Apple's relay does")
            out.raw("</div>\n")
            return
        }
        open("mail", summary: records.isEmpty ? "no mail yet: the mock takes mail on its SMTP port (serve --smtp-port PORT)" : "newest \(records.count) messages and refusals, newest first")
        guard !records.isEmpty else {
            out.raw("</div>\n")
            return
        }
        out.raw("<table class=\"grid mail\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">at (mock time)</th><th scope=\"col\">from</th>")
        out.raw("<th scope=\"col\">recipients and verdicts</th><th scope=\"col\">subject</th><th scope=\"col\">sent on</th></tr></thead><tbody>")
        for record in records { message(record) }
        out.raw("\n</tbody></table></div>\n")
    }

    private mutating func message(_ record: MailRecord) {
        out.raw("\n<tr id=\"mail-")
        out.number(record.id)
        out.raw("\"><th scope=\"row\">")
        out.number(record.id)
        out.raw("</th><td>")
        mockTime(record.at)
        out.raw("</td><td class=\"mono\">")
        out.text(record.sender.isEmpty ? "<> (null sender)" : record.sender)
        if record.overTLS { out.raw(" <span class=\"tag\">TLS</span>") }
        out.raw("</td><td>")
        for recipient in record.recipients {
            out.raw("<div>")
            mono(recipient.address)
            out.raw(" ")
            switch recipient.verdict {
            case .forward(_, let real, _, _):
                tag("forwarded", "ok")
                out.raw(" → ")
                mono(real)
            case .direct:
                tag("direct")
            case .refuse(_, _, let reason):
                tag("refused", "bad")
                out.raw(" <span class=\"reason\">")
                out.text(reason)
                out.raw("</span>")
                if let reply = recipient.reply {
                    out.raw(" <span class=\"mono dim\">")
                    out.text(reply)
                    out.raw("</span>")
                }
            }
            out.raw("</div>")
        }
        out.raw("</td><td>")
        if let raw = record.raw {
            let (fields, _) = MailContent.split(raw[...])
            if let subject = MailContent.field("subject", in: fields).map(MailContent.decodeWords) {
                out.text(subject)
            } else {
                out.raw("<span class=\"dim\">(no subject)</span>")
            }
        } else {
            out.raw("<span class=\"dim\">refused before any message</span>")
        }
        out.raw("</td><td>")
        if let forwarding = record.forwarding {
            mono(forwarding.target)
            out.raw(" ")
            switch forwarding.outcome {
            case .delivered: tag("delivered", "ok")
            case .pending: tag("pending", "warn")
            case .failed: tag("failed", "bad")
            }
            if let error = forwarding.error {
                out.raw(" <span class=\"error\">")
                out.text(error)
                out.raw("</span>")
            }
        } else {
            out.raw("<span class=\"dim\">—</span>")
        }
        out.raw("</td></tr>")
    }
}
