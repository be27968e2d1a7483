import JOSE

/// The dashboard's data as one HTML fragment (`GET /__mock/dashboard`): an element per section
/// of the page, `data-slot="users"` and so on (and `users-summary`, its line of counts), whose
/// content replaces the page's own, and a `meta` slot whose attributes the script reads (where
/// its long polls start, whether anything is still being delivered). Markup comes only from
/// literals and every value is escaped (`HTMLBuffer`); buttons carry the control API call they
/// make (`data-method`, `data-path`, `data-body`) and a `data-test` name that stays put.
///
/// Lines carry the structure the script relies on: a slot starts a line, and so does each table
/// row with an id (`<tr id="user-alice">`, `<tbody id="notification-3">`), which holds no other
/// line break (escaped text has none), so the script parses only the rows that changed.
struct DashboardFragment {
    /// What to render.
    let snapshot: DashboardSnapshot
    /// The scenario's teams, app groups and clients.
    let directory: DashboardDirectory
    /// The requests filters, echoed in that section's summary.
    let query: DashboardQuery
    /// The fragment so far.
    var out: HTMLBuffer

    /// A renderer of `snapshot`.
    init(snapshot: DashboardSnapshot, directory: DashboardDirectory, query: DashboardQuery) {
        self.snapshot = snapshot
        self.directory = directory
        self.query = query
        out = HTMLBuffer(capacity: 96 * 1024 + snapshot.users.count * 1400)
    }

    /// Every section, in the page's order.
    mutating func render() -> [UInt8] {
        meta()
        users()
        keys()
        clock()
        notifications()
        requests()
        mail()
        events()
        lists()
        return out.bytes
    }

    // MARK: - Meta, clock, suggestions

    /// Cursors and flags for the script.
    private mutating func meta() {
        let pending = snapshot.notifications?.filter { $0.outcome == .pending }.count ?? 0
        let forwarding = snapshot.mail?.filter { $0.forwarding?.outcome == .pending }.count ?? 0
        out.raw("<div data-slot=\"meta\" data-last-event=\"")
        out.number(snapshot.lastEvent)
        out.raw("\" data-journal=\"")
        if let requests = snapshot.requests {
            out.raw("on\" data-newest-request=\"")
            out.number(requests.newest)
        } else {
            out.raw("off")
        }
        out.raw("\" data-mail=\"")
        if let mail = snapshot.mail {
            out.raw("on\" data-last-mail=\"")
            out.number(mail.first?.id ?? 0)
        } else {
            out.raw("off")
        }
        out.raw("\" data-pending=\"")
        out.number(pending + forwarding)
        out.raw("\"></div>\n")
    }

    /// Mock time exactly, whether it runs, and how far it is from real time.
    private mutating func clock() {
        let clock = snapshot.world.clock
        out.raw("<div data-slot=\"clock\"><p class=\"clock\"><time id=\"mock-now\" class=\"now mono\" data-epoch=\"")
        out.number(snapshot.now)
        out.raw("\" data-frozen=\"")
        out.raw(clock.isFrozen ? "true" : "false")
        out.raw("\" datetime=\"")
        out.text(RFC3339.format(snapshot.now))
        out.raw("\">")
        out.text(RFC3339.format(snapshot.now))
        out.raw("</time> ")
        if clock.isFrozen {
            out.raw("<span class=\"tag warn\">frozen</span> ")
        } else {
            out.raw("<span class=\"tag ok\">running</span> ")
        }
        out.raw("<span class=\"dim\">epoch</span> <span class=\"mono\" id=\"mock-epoch\">")
        out.number(snapshot.now)
        out.raw("</span> <span class=\"dim\">· ")
        let offset = Int64(seconds: snapshot.offset, rounding: .toNearestOrAwayFromZero)
        if offset == 0 {
            out.raw("on real time")
        } else {
            out.text(Self.span(abs(offset)))
            out.raw(offset > 0 ? " ahead of real time (" : " behind real time (")
            out.text(offset > 0 ? "+" + String(offset) : String(offset))
            out.raw(" s)")
        }
        out.raw("</span> ")
        if clock.isFrozen {
            action("Unfreeze", method: "POST", path: "/__mock/clock", body: ["freeze": false], test: "unfreeze", kind: "small")
        } else {
            action("Freeze", method: "POST", path: "/__mock/clock", body: ["freeze": true], test: "freeze", kind: "small")
        }
        out.raw("</p></div>\n")
    }

    /// The requests filter's suggestions: route templates and client ids.
    private mutating func lists() {
        out.raw("<div data-slot=\"lists\"><datalist id=\"route-list\">")
        for route in directory.routes {
            out.raw("<option value=\"")
            out.text(route)
            out.raw("\"></option>")
        }
        out.raw("</datalist><datalist id=\"client-list\">")
        for client in directory.clientIDs.prefix(1000) {
            out.raw("<option value=\"")
            out.text(client)
            out.raw("\"></option>")
        }
        out.raw("</datalist></div>\n")
    }

    // MARK: - Pieces every section uses

    /// A button that calls the control API: `method path` with `body` as JSON (none when nil),
    /// after the person confirms `confirm` when given.
    mutating func action(_ label: StaticString, method: StaticString, path: String, body: JSONObject?, test: String,
                         confirm: String? = nil, kind: StaticString = "") {
        out.raw("<button")
        if kind.utf8CodeUnitCount > 0 {
            out.raw(" class=\"")
            out.raw(kind)
            out.raw("\"")
        }
        out.raw(" data-method=\"")
        out.raw(method)
        out.raw("\" data-path=\"")
        out.text(path)
        if let body {
            out.raw("\" data-body='")
            out.singleQuoted(bytes: JSONWriter.compact(.object(body)))
            out.raw("'")
        } else {
            out.raw("\"")
        }
        if let confirm {
            out.raw(" data-confirm=\"")
            out.text(confirm)
            out.raw("\"")
        }
        out.raw(" data-test=\"")
        out.text(test)
        out.raw("\">")
        out.raw(label)
        out.raw("</button>")
    }

    /// A mock time, exactly (RFC 3339). Its seconds in `data-at` let the page's script say how
    /// long ago it was on the running mock clock, so the fragment does not change as time passes
    /// and an unchanged section is not parsed again.
    mutating func mockTime(_ seconds: Int64) {
        out.raw("<time data-at=\"")
        out.number(seconds)
        out.raw("\">")
        out.text(RFC3339.format(seconds))
        out.raw("</time>")
    }

    /// A real time (the journal's) as `HH:MM:SS.mmm` UTC, the whole instant in its title.
    mutating func realTime(_ time: Double) {
        let seconds = Int64(seconds: time)
        let milliseconds = String(1000 + max(0, min(999, Int64(seconds: (time - Double(seconds)) * 1000)))).dropFirst()
        let full = RFC3339.format(seconds)
        let stamp = full.dropLast().split(separator: "T").last.map(String.init) ?? full
        out.raw("<time title=\"")
        out.text(full)
        out.raw(" (real time)\">")
        out.text(stamp)
        out.raw(".")
        out.text(String(milliseconds))
        out.raw("</time>")
    }

    /// A small coloured label.
    mutating func tag(_ text: String, _ kind: StaticString = "") {
        out.raw("<span class=\"tag")
        if kind.utf8CodeUnitCount > 0 {
            out.raw(" ")
            out.raw(kind)
        }
        out.raw("\">")
        out.text(text)
        out.raw("</span>")
    }

    /// Text in a monospace span.
    mutating func mono(_ text: String) {
        out.raw("<span class=\"mono\">")
        out.text(text)
        out.raw("</span>")
    }

    /// A section's opening: a slot with a line saying what it shows, then the section's slot.
    /// The line is a slot of its own, so a count that changes leaves the section's table as it was.
    mutating func open(_ slot: StaticString, summary: String) {
        out.raw("<div data-slot=\"")
        out.raw(slot)
        out.raw("-summary\">")
        out.text(summary)
        out.raw("</div>\n<div data-slot=\"")
        out.raw(slot)
        out.raw("\">")
    }

    /// A length of time in its largest whole unit: `45 s`, `5 min`, `3 h`, `12 d`.
    static func span(_ seconds: Int64) -> String {
        switch seconds {
        case ..<60: "\(seconds) s"
        case ..<3600: "\(seconds / 60) min"
        case ..<86_400: "\(seconds / 3600) h"
        default: "\(seconds / 86_400) d"
        }
    }

    /// `value` with thousands separated by commas.
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }

    /// `text` as one path segment: letters, digits, `-`, `.`, `_`, `~` as they are, other bytes
    /// percent-encoded.
    static func segment(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case 48...57, 65...90, 97...122, 45, 46, 95, 126: out.append(byte)
            default: out += [37, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
