/// What one route declares about itself, listed by `RouteTable.routes` (for documents such as
/// an OpenAPI contract to be checked against the table).
public struct RouteInfo: Hashable, Sendable {
    /// The method it answers (a GET route also answers HEAD).
    public var method: HTTPMethod
    /// The exact path, or a template with named segments: `/__mock/keys/{kid}/activate`.
    public var template: String
    /// One line on what it does; empty when none was given.
    public var summary: String
    /// The request fields it reads (query, form or JSON names), as declared.
    public var reads: [String]

    /// A route's metadata.
    public init(method: HTTPMethod, template: String, summary: String = "", reads: [String] = []) {
        self.method = method
        self.template = template
        self.summary = summary
        self.reads = reads
    }
}
