import JOSE

extension DashboardFragment {
    /// Events: the newest changes to the mock's state from the feed (`GET /__mock/events`),
    /// newest first, with their fields.
    mutating func events() {
        let events = snapshot.events
        open("events", summary: events.isEmpty ? "no event yet" : "newest \(events.count) of the event feed, newest first (last #\(snapshot.lastEvent))")
        guard !events.isEmpty else {
            out.raw("</div>\n")
            return
        }
        out.raw("<table class=\"grid events\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">at (mock time)</th><th scope=\"col\">event</th>")
        out.raw("<th scope=\"col\">what changed</th></tr></thead><tbody>")
        for recorded in events {
            out.raw("\n<tr id=\"event-")
            out.number(recorded.sequence)
            out.raw("\"><th scope=\"row\">")
            out.number(recorded.sequence)
            out.raw("</th><td>")
            mockTime(Int64(seconds: recorded.at))
            out.raw("</td><td>")
            tag(recorded.event.name)
            out.raw("</td><td class=\"changes\">")
            for (name, value) in recorded.event.fields where value != .null {
                out.raw("<span class=\"f\">")
                out.text(name)
                out.raw(" <code>")
                if case .string(let text) = value {
                    out.text(text)
                } else {
                    out.text(bytes: JSONWriter.compact(value))
                }
                out.raw("</code></span> ")
            }
            out.raw("</td></tr>")
        }
        out.raw("\n</tbody></table></div>\n")
    }
}
