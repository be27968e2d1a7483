import MiniHTTP

/// Which journaled requests to list or count: every field set must match (`GET
/// /__mock/requests?method=&path=&client_id=&grant_type=&status=&control=&after=`).
public struct RequestFilter: Sendable, Equatable {
    /// The request's method (`POST`).
    package var method: HTTPMethod?
    /// The request's path as sent (`/auth/token`), or the route template that took it
    /// (`/__mock/keys/{kid}`).
    package var path: String?
    /// The `client_id` it carried (form, query or JSON body).
    package var clientID: String?
    /// The `grant_type` of its form.
    var grantType: String?
    /// The status answered: an exact code (`200`…`599`), or a class `1`…`5` (`4xx`).
    package var status: StatusMatch?
    /// Only requests to the control API (`true`) or only to Apple's routes and unrouted paths (`false`).
    package var control: Bool?
    /// Only entries with a larger id.
    package var after: UInt64 = 0
    /// Leaves out the dashboard's own requests (its page, script, style sheet, data and marked
    /// long polls): what the dashboard's requests section shows.
    var leavesOutDashboard = false

    /// A status to match: one code, or a class.
    public enum StatusMatch: Sendable, Equatable {
        /// Exactly this code.
        case code(Int)
        /// Any code of this hundred (`4` is 4xx).
        case statusClass(Int)

        /// `"401"` → `.code(401)`, `"4xx"` → `.statusClass(4)`; nil for anything else.
        init?(_ text: String) {
            let bytes = Array(text.utf8)
            guard bytes.count == 3, (UInt8(ascii: "1")...UInt8(ascii: "5")).contains(bytes[0]) else { return nil }
            let hundred = Int(bytes[0] - UInt8(ascii: "0"))
            if bytes[1] == UInt8(ascii: "x") && bytes[2] == UInt8(ascii: "x") {
                self = .statusClass(hundred)
            } else if let code = Int(text) {
                self = .code(code)
            } else {
                return nil
            }
        }

        func matches(_ code: Int) -> Bool {
            switch self {
            case .code(let expected): code == expected
            case .statusClass(let hundred): code / 100 == hundred
            }
        }
    }

    /// A filter from its parts; none set matches every request.
    public init(method: HTTPMethod? = nil, path: String? = nil, clientID: String? = nil, grantType: String? = nil, status: StatusMatch? = nil,
                control: Bool? = nil, after: UInt64 = 0) {
        self.method = method
        self.path = path
        self.clientID = clientID
        self.grantType = grantType
        self.status = status
        self.control = control
        self.after = after
    }

    /// What a filter parameter's value must be (`"a method in capitals (GET, POST …)"`) when
    /// `value` is not one; nil when it is, or when `parameter` is none of these: `method`,
    /// `path`, `client_id`, `grant_type`, `status`, `control`. The control API and the CLI both
    /// check with it.
    package static func problem(_ parameter: String, _ value: String) -> String? {
        switch parameter {
        case "method":
            !value.isEmpty && value.utf8.count <= 32 && value.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) ? nil : "a method in capitals (GET, POST …)"
        case "path": value.hasPrefix("/") && value.utf8.count <= 2048 ? nil : "a path starting with /"
        case "client_id", "grant_type": !value.isEmpty && value.utf8.count <= 256 ? nil : "a \(parameter)"
        case "status": StatusMatch(value) == nil ? "a status code from 100 to 599, or a class such as 4xx" : nil
        case "control": value == "true" || value == "false" ? nil : "true or false"
        default: nil
        }
    }

    /// Whether the record with `keys` passes, read from its bytes: what the journal's reads
    /// filter with, deciding as `matches(_:)` does on the entry the record decodes to.
    func matches(_ keys: JournalRecord.KeyView, id: UInt64) -> Bool {
        func equal(_ value: String, _ bytes: UnsafeRawBufferPointer?) -> Bool {
            guard let bytes else { return false }
            return value.utf8.elementsEqual(bytes)
        }
        if id <= after { return false }
        if let method, !equal(method.rawValue, keys.method) { return false }
        if let path, !equal(path, keys.path) && !equal(path, keys.route) { return false }
        if let control, keys.isControl != control { return false }
        if let status { guard keys.status != 0, status.matches(Int(keys.status)) else { return false } }
        if let clientID, !equal(clientID, keys.clientID) { return false }
        if let grantType, !equal(grantType, keys.grantType) { return false }
        if leavesOutDashboard && keys.isDashboard { return false }
        return true
    }

    /// Whether `entry` passes.
    func matches(_ entry: JournalEntry) -> Bool {
        if entry.id <= after { return false }
        if leavesOutDashboard && DashboardSnapshot.isOwn(entry) { return false }
        if let method, entry.method != method { return false }
        if let path, entry.path != path && entry.route != path { return false }
        if let control, entry.isControl != control { return false }
        if let status { guard let code = entry.status?.code, status.matches(code) else { return false } }
        if let clientID, entry.clientID != clientID { return false }
        if let grantType, entry.grantType != grantType { return false }
        return true
    }
}
