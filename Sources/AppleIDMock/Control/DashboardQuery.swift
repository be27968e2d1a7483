import MiniHTTP

/// The dashboard data's query (`GET /__mock/dashboard?route=&client=`): what narrows its requests
/// section. `route` is a path as sent or a route template (`/__mock/keys/{kid}`), `client` a
/// `client_id`; an empty value is no filter. Anything else is a 400 naming the parameter.
struct DashboardQuery: Equatable {
    /// Only requests to this path or route.
    var route: String?
    /// Only requests that carried this `client_id`.
    var client: String?

    /// The longest `route` taken: routes are short, and a query stays well within a request head.
    static let maxRouteBytes = 512

    /// No filter.
    init(route: String? = nil, client: String? = nil) {
        self.route = route
        self.client = client
    }

    /// The filters `request`'s query names.
    init(_ request: HTTPRequest) throws(ControlRequest.Failure) {
        let query = try ControlRequest.query(request, for: ControlOperations.dashboardData)
        if let name = query.duplicatedNames.first { throw ControlRequest.Failure(message: "given more than once", field: name) }
        for (name, value) in query {
            switch name {
            case "route":
                guard !value.isEmpty else { continue }
                guard value.hasPrefix("/"), value.utf8.count <= Self.maxRouteBytes else {
                    throw ControlRequest.Failure(message: "expected a path starting with / of at most \(Self.maxRouteBytes) bytes", field: name)
                }
                route = value
            case "client":
                guard !value.isEmpty else { continue }
                if let problem = RequestFilter.problem("client_id", value) { throw ControlRequest.Failure(message: "expected \(problem)", field: name) }
                client = value
            default: break
            }
        }
    }

    /// The journal filter for these values.
    var filter: RequestFilter { RequestFilter(path: route, clientID: client) }
}
