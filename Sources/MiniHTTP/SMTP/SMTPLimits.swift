/// Bounds on what one SMTP client may send (RFC 5321 §4.5.3). Every input is bounded.
public struct SMTPLimits: Sendable, Equatable {
    /// Longest command line, CRLF included (RFC 5321 §4.5.3.1.4: 512). Longer: 500 5.5.2.
    public var maxCommandLineBytes = 512
    /// Longest line of message text, CRLF included (RFC 5321 §4.5.3.1.6: 1000). A longer line
    /// is read to its end, and the message refused at the final dot with 500 5.5.2.
    public var maxTextLineBytes = 1000
    /// Largest message, after dot-unstuffing, CRLFs included: advertised as `SIZE` (RFC 1870).
    /// A larger `SIZE=` is refused at MAIL; a larger DATA is read to the dot, not kept, and
    /// refused with 552 5.3.4.
    public var maxMessageBytes = 10 * 1024 * 1024
    /// Most accepted recipients in one transaction (RFC 5321 §4.5.3.1.8 asks for at least 100);
    /// the next RCPT is answered 452 4.5.3.
    public var maxRecipients = 100
    /// Protocol errors (bad syntax, bad sequence, unknown commands, over-long lines) after which
    /// the session answers 421 4.7.0 and closes, like Postfix's `smtpd_hard_error_limit`.
    public var maxErrors = 10

    /// The defaults above.
    public init() {}
}
