/// A second protocol on the server's event loops (`HTTPServer.start(configuration:routes:smtp:)`):
/// SMTP (RFC 5321) on a port of its own, served by `SMTPSession`s whose verdicts come from
/// `handler`. The loops, the connection limit and the socket layer are the server's, shared
/// with HTTP; what is SMTP's (its sessions, its message budget, its timeouts) is here.
public struct SMTPServerConfiguration: Sendable {
    /// Address to bind: an IPv4 or IPv6 literal, or `localhost`.
    public var host: String = "127.0.0.1"
    /// Port to bind; 0 binds an ephemeral port, readable from `HTTPServer.smtpPort`.
    public var port: Int = 2525
    /// The name the server gives in its greeting and EHLO reply.
    public var hostname: String = "localhost"
    /// Line, message and count limits on clients.
    public var limits = SMTPLimits()
    /// Decides on senders, recipients and messages; called on the event loop, so it must not block.
    public var handler: any SMTPHandler
    /// When set, `STARTTLS` is offered and upgrades the connection with this context.
    public var tls: TLSServerContext?
    /// Seconds a client may send nothing (between commands, or in the middle of a message)
    /// before it is told 421 and the connection closes. RFC 5321 §4.5.3.2 asks for minutes.
    public var idleTimeout: Double = 300
    /// Seconds queued replies may take to leave before the connection is dropped.
    public var writeTimeout: Double = 30
    /// Seconds a message's text may take from DATA's 354 to the final dot, however steadily
    /// its bytes come (a client trickling a byte per idle timeout cannot hold its buffer forever).
    public var dataTimeout: Double = 600
    /// Message bytes all SMTP sessions together may hold: SMTP's own budget, apart from HTTP's
    /// `maxBufferedBodyBytes`, so mail never starves the HTTP routes (eight slow mail
    /// sessions holding the shared budget made every `POST /auth/token` answer 503 for ten
    /// minutes). A session that would pass it is told 452 and let go.
    public var maxBufferedMessageBytes: Int = 64 * 1024 * 1024
    /// Most message bytes one session may hold: a quarter of `maxBufferedMessageBytes`, so no one
    /// session takes the budget (at least `limits.maxMessageBytes` is needed to take the largest
    /// message; the default 10 MiB fits).
    public var maxSessionBufferedBytes: Int { maxBufferedMessageBytes / 4 }
    /// Bytes a second a message's text must average over each `dataRateWindow` once half of
    /// `maxBufferedMessageBytes` is held, as Postfix shortens its timeouts under stress: a client
    /// trickling its message is told 421 and let go, freeing what it held for those that send.
    public var minDataRate: Int = 1024
    /// Seconds over which `minDataRate` is measured.
    public var dataRateWindow: Double = 10
    /// SMTP sessions held at once, out of the server's `maxConnections` that HTTP shares: a
    /// client past it is told 421 and let go, so mail clients cannot take every connection
    /// HTTP needs. Postfix serves 100 sessions by default.
    public var maxSessions: Int = 1000

    /// A configuration with the defaults above, deciding with `handler`.
    public init(handler: any SMTPHandler) {
        self.handler = handler
    }
}
