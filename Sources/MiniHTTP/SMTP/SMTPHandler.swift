/// What an `SMTPSession` asks the application. Called on the session owner's thread (an event
/// loop): every method must be quick and never block. A returned reply is sent as it is; a 2xx
/// reply accepts, anything else refuses, and a 421 also closes the connection (RFC 5321 §3.8).
public protocol SMTPHandler: Sendable {
    /// The verdict on MAIL FROM (address without `<>`, "" for the null path). nil accepts
    /// (`250 2.1.0 Ok`).
    func sender(_ address: String, heloName: String) -> SMTPReply?
    /// The verdict on one RCPT TO (address without `<>`). nil accepts (`250 2.1.5 Ok`).
    func recipient(_ address: String, sender: String) -> SMTPReply?
    /// The message after its final dot. nil accepts (`250 2.0.0 Ok: queued`).
    func deliver(_ message: SMTPMessage) -> SMTPReply?
}
