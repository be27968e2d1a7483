/// An error that knows the HTTP response it stands for. Handlers may throw these; anything
/// else thrown becomes a logged 500.
public protocol HTTPResponseError: Error {
    /// The response to send in place of the failed handler's.
    var response: HTTPResponse { get }
}
