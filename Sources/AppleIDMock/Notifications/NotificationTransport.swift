import JOSE

/// Sends one notification body to a URL and says how it went: the deliverer's way out
/// (`HTTPNotificationTransport` over the mock's HTTP client, or a test's recorder).
public protocol NotificationTransport: Sendable {
    /// POSTs `body` (JSON) to `url`; blocking, bounded by the transport's own timeouts.
    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt
}
