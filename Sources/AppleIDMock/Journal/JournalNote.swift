/// What a route's handler tells the request journal about its answer (`HTTPResponse.note`):
/// Apple's `error` code and the developer-facing reason when it refused the request, and the
/// events its operations recorded.
struct JournalNote: Sendable {
    /// Apple's `error` code (`invalid_grant`), or the refusal's code on Apple's error page.
    var error: String?
    /// Why, in the words of the log line; Apple's own answer never carries it.
    var reason: String?
    /// Sequence numbers of the events the request's operations recorded, in order.
    var events: [UInt64] = []
    /// The injected fault that acted on the request: its id and action (`f1 delay`).
    var fault: String?
}
