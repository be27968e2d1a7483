import MiniHTTP

/// Delivers notifications with MiniHTTP's client: `http` or `https` (the receiver's certificate
/// checked against the system store or `caFile`), with connect and response timeouts.
struct HTTPNotificationTransport: NotificationTransport {
    let client: HTTPClient

    /// A transport with `connectTimeout`/`responseTimeout` seconds and an optional CA file.
    init(caFile: String?, connectTimeout: Double, responseTimeout: Double) {
        var client = HTTPClient()
        client.caFile = caFile
        client.connectTimeout = connectTimeout
        client.responseTimeout = responseTimeout
        self.client = client
    }

    /// The attempt's time is the deliverer's to stamp (mock time): 0 here.
    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt {
        do {
            let response = try client.send("POST", url: url, headers: [("Content-Type", "application/json")], body: body)
            return NotificationRecord.Attempt(at: 0, status: response.status, error: nil)
        } catch {
            return NotificationRecord.Attempt(at: 0, status: nil, error: error.description)
        }
    }
}
