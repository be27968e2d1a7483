/// One thing the SMTP port received: a message with the relay's verdict on each of its
/// recipients, or a recipient the relay refused (then `raw` is nil: no message was taken).
package struct MailRecord: Sendable {
    /// One recipient and what the relay did with it.
    package struct Recipient: Sendable, Equatable {
        /// The address as the client gave it in `RCPT TO`.
        package var address: String
        /// Forwarded, direct, or refused (with the developer's reason).
        package var verdict: RelayVerdict
        /// The reply the client got for a refused recipient.
        package var reply: String?
    }

    /// Where forwarded and direct mail went on to (`--mail-forward`).
    struct Forwarding: Sendable, Equatable {
        /// What happened to the copy.
        package enum Outcome: String, Sendable, Equatable {
            case pending, delivered, failed
        }

        /// The catcher, `smtp://HOST:PORT`.
        package var target: String
        /// Pending until tried; then delivered or failed.
        package var outcome: Outcome
        /// Why it failed (the first copy's failure when several failed).
        package var error: String?
        /// Copies of this message sent on (one per forwarded recipient, one for the direct ones),
        /// and how many arrived: delivered once all did, failed as soon as one did not.
        var copies = 1
        var arrived = 0
    }

    /// Increasing from 1; `after` in the mailbox API.
    package var id: UInt64
    /// Mock time (seconds since 1970) when the message's final dot, or the refused `RCPT`, came.
    package var at: Int64
    /// The client's `EHLO`/`HELO` name.
    package var heloName: String
    /// Whether the message came over TLS (`STARTTLS`).
    package var overTLS: Bool
    /// The envelope sender (`MAIL FROM`), "" for the null sender.
    package var sender: String
    /// The recipients with their verdicts.
    package var recipients: [Recipient]
    /// The message as received (dot-unstuffed, CRLF line ends); nil for a refusal.
    package var raw: [UInt8]?
    /// The copy sent on to `--mail-forward`, when there is one.
    var forwarding: Forwarding?

    /// Bytes this record holds against the mailbox's budget.
    var cost: Int { (raw?.count ?? 0) + 256 + sender.utf8.count + recipients.reduce(0) { $0 + $1.address.utf8.count + 64 } }
}
