/// A second protocol on the server's event loops: SMTP (RFC 5321) on a port of its own, served
/// by `SMTPSession`s whose verdicts come from `handler`. The loops, the connection limit and the
/// socket layer are the HTTP side's.
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

    /// A configuration with the defaults above, deciding with `handler`.
    public init(handler: any SMTPHandler) {
        self.handler = handler
    }
}
