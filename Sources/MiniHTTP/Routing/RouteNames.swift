/// Which route answers a method on a path, without the handlers: what a log or a journal keeps
/// to name the route a request took. It holds nothing a handler holds, so an observer the
/// routes themselves hold (a request journal) can keep it without the two holding each other.
public struct RouteNames: Sendable {
    private let exact: [String: Set<HTTPMethod>]
    /// In the table's order: the most literal template first.
    private let templates: [(template: PathTemplate, methods: Set<HTTPMethod>)]

    init(exact: [String: Set<HTTPMethod>], templates: [(template: PathTemplate, methods: Set<HTTPMethod>)]) {
        self.exact = exact
        self.templates = templates
    }

    /// The route that answers `method` on `path`: the exact path or the template that takes it
    /// (`/__mock/keys/{kid}`); nil when a fallback or MiniHTTP answers.
    public func route(_ method: HTTPMethod, _ path: String) -> String? {
        func takes(_ methods: Set<HTTPMethod>) -> Bool { methods.contains(method) || (method == .head && methods.contains(.get)) }
        if let methods = exact[path] { return takes(methods) ? path : nil }
        guard let routes = templates.first(where: { $0.template.match(path) != nil }) else { return nil }
        return takes(routes.methods) ? routes.template.text : nil
    }
}
