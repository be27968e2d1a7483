import JOSE
import MiniHTTP

extension JournalRecord.Plan {
    /// What filters read of `exchange`, worked out from its request as the journal keeps it
    /// (the body's first `bodyLimit` bytes), with the flags for the control API and the
    /// dashboard's own requests. The `client_id` is a form body's, else the query's, else a JSON
    /// body's top-level string; the `grant_type` a form body's.
    static func keys(_ exchange: borrowing HTTPExchange, routes: RouteNames?) -> (JournalRecord.Keys, UInt8) {
        guard let request = exchange.request else { return (JournalRecord.Keys(), 0) }
        var flags: UInt8 = 0
        let path = request.path
        if path.hasPrefix(ControlResponse.prefix) { flags |= JournalRecord.controlFlag }
        // The dashboard's own requests are all under /__mock: Apple's routes (the hot ones) skip the look.
        if path.hasPrefix(DashboardEndpoint.barePath),
           DashboardEndpoint.paths.contains(path) || request.headers[DashboardSnapshot.ownRequestHeader] != nil {
            flags |= JournalRecord.dashboardFlag
        }
        var clientID: String?
        var grantType: String?
        // Bodies only where there is one (a GET, the hottest requests, has none to look at).
        if !request.body.isEmpty {
            let kept = request.body.count > JournalRecord.bodyLimit ? Array(request.body.prefix(JournalRecord.bodyLimit)) : request.body
            if request.mediaType == "application/x-www-form-urlencoded", let form = try? HTTPForm(decoding: kept) {
                clientID = form["client_id"]
                grantType = form["grant_type"]
                if clientID == nil, let query = request.query, !query.isEmpty { clientID = (try? request.queryParameters())?["client_id"] }
            } else {
                if let query = request.query, !query.isEmpty { clientID = (try? request.queryParameters())?["client_id"] }
                if clientID == nil, kept.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) == UInt8(ascii: "{"),
                   case .object(let object)? = try? JSONParser.parse(kept), case .string(let value)? = object["client_id"] {
                    clientID = value
                }
            }
        } else if let query = request.query, !query.isEmpty {
            clientID = (try? request.queryParameters())?["client_id"]
        }
        return (JournalRecord.Keys(method: request.method.rawValue, path: path, route: routes?.route(request.method, path), clientID: clientID,
                                   grantType: grantType), flags)
    }
}
