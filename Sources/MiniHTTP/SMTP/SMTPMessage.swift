/// The envelope and content of one message a session accepted up to its final dot.
public struct SMTPMessage: Sendable {
    /// The name the client gave in EHLO or HELO.
    public var heloName: String
    /// The MAIL FROM reverse-path without `<>` and source route; "" for the null path `<>`.
    public var sender: String
    /// The accepted RCPT TO paths, in order, without `<>` and source route.
    public var recipients: [String]
    /// The message as received: dot-unstuffing done, lines ended by CRLF, without the final `.` line.
    public var data: [UInt8]
    /// True when MAIL FROM carried `BODY=8BITMIME` (RFC 6152).
    public var eightBitMIME: Bool
    /// True when the message came after STARTTLS (RFC 3207).
    public var overTLS: Bool

    /// A message with every field given.
    public init(heloName: String, sender: String, recipients: [String], data: [UInt8], eightBitMIME: Bool, overTLS: Bool) {
        self.heloName = heloName
        self.sender = sender
        self.recipients = recipients
        self.data = data
        self.eightBitMIME = eightBitMIME
        self.overTLS = overTLS
    }
}
