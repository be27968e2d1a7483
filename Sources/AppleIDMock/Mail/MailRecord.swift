/// One thing the SMTP port received: a message with the relay's verdict on each of its
/// recipients, or a recipient the relay refused (then `raw` is nil: no message was taken).
public struct MailRecord: Sendable {
    /// One recipient and what the relay did with it.
    public struct Recipient: Sendable, Equatable {
        /// The address as the client gave it in `RCPT TO`.
        public var address: String
        /// Forwarded, direct, or refused (with the developer's reason).
        public var verdict: RelayVerdict
        /// The reply the client got for a refused recipient.
        public var reply: String?
    }

    /// Where forwarded and direct mail went on to (`--mail-forward`).
    public struct Forwarding: Sendable, Equatable {
        /// What happened to the copy.
        public enum Outcome: String, Sendable, Equatable {
            case pending, delivered, failed
        }

        /// The catcher, `smtp://HOST:PORT`.
        public var target: String
        /// Pending until tried; then delivered or failed.
        public var outcome: Outcome
        /// Why it failed (the first copy's failure when several failed).
        public var error: String?
        /// Copies of this message sent on (one per forwarded recipient, one for the direct ones),
        /// and how many arrived: delivered once all did, failed as soon as one did not.
        var copies = 1
        var arrived = 0
    }

    /// Increasing from 1; `after` in the mailbox API.
    public var id: UInt64
    /// Mock time (seconds since 1970) when the message's final dot, or the refused `RCPT`, came.
    public var at: Int64
    /// The client's `EHLO`/`HELO` name.
    public var heloName: String
    /// Whether the message came over TLS (`STARTTLS`).
    public var overTLS: Bool
    /// The envelope sender (`MAIL FROM`), "" for the null sender.
    public var sender: String
    /// The recipients with their verdicts.
    public var recipients: [Recipient]
    /// The message as received (dot-unstuffed, CRLF line ends); nil for a refusal.
    public var raw: [UInt8]?
    /// The copy sent on to `--mail-forward`, when there is one.
    public var forwarding: Forwarding?

    /// Bytes this record holds against the mailbox's budget.
    var cost: Int { (raw?.count ?? 0) + 256 + sender.utf8.count + recipients.reduce(0) { $0 + $1.address.utf8.count + 64 } }
}
