import AppleIDMock
import Dispatch
import JOSE
import MiniHTTP
import Synchronization

/// What `notifications listen` does with each notification: verifies it, prints one line
/// (text or JSON) on stdout, answers 200 or 400, and counts the verified ones towards `--count`.
final class NotificationPrinter: Sendable {
    /// Signalled once `count` notifications were verified (and by the stop signals).
    let done = DispatchSemaphore(value: 0)
    private let json: Bool
    private let count: Int?
    private let verified = Mutex(0)

    /// A printer writing JSON lines when `json`, finishing after `count` verified notifications.
    init(json: Bool, count: Int?) {
        self.json = json
        self.count = count
    }

    /// Verifies `body`, prints its line and returns the answer for the mock.
    func answer(_ verifier: NotificationVerifier, _ body: [UInt8]) -> HTTPResponse {
        let notification: NotificationVerifier.Verified
        do {
            notification = try verifier.verify(body: body)
        } catch {
            // The reason quotes what the sender put in the header before any check: escaped, so
            // no sender can forge output lines or send terminal escapes.
            let reason = LogText.escaped(error.reason)
            Output.out(json ? Self.jsonLine(["verified": false, "reason": .string(error.reason)]) : "REJECTED \(reason)")
            return .text("rejected: \(reason)\n", status: .badRequest)
        }
        Output.out(json ? Self.jsonLine(notification) : LogText.escaped(Self.textLine(notification)))
        let total = verified.withLock { value in
            value += 1
            return value
        }
        if let count, total == count { done.signal() }
        return .text("verified\n")
    }

    /// `<type> sub=… aud=… event_time=… [email=… is_private_email=…] verified kid=…`.
    static func textLine(_ notification: NotificationVerifier.Verified) -> String {
        let event = notification.event
        var line = "\(event["type"]?.stringValue ?? "") sub=\(event["sub"]?.stringValue ?? "")"
        line += " aud=\(notification.claims["aud"]?.stringValue ?? "")"
        line += " event_time=\(text(event["event_time"]))"
        if let email = event["email"] { line += " email=\(text(email))" }
        if let isPrivate = event["is_private_email"] { line += " is_private_email=\(text(isPrivate))" }
        return line + " verified kid=\(notification.keyID)"
    }

    /// `{"claims": …, "event": …, "events_claim_format": …, "kid": …, "verified": true}`, keys sorted.
    static func jsonLine(_ notification: NotificationVerifier.Verified) -> String {
        jsonLine(["verified": true, "kid": .string(notification.keyID), "claims": .object(notification.claims),
                  "event": .object(notification.event), "events_claim_format": .string(notification.eventsFormat)])
    }

    private static func jsonLine(_ object: JSONObject) -> String {
        String(decoding: JSONWriter.sortedCompact(.object(object)), as: UTF8.self)
    }

    /// A value for a text line: strings bare, anything else as JSON, `-` when missing.
    private static func text(_ value: JSONValue?) -> String {
        guard let value else { return "-" }
        return value.stringValue ?? String(decoding: JSONWriter.compact(value), as: UTF8.self)
    }
}
