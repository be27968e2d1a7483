import MiniHTTP
import Synchronization

/// An `SMTPHandler` for tests: answers from fixed rules and records what it was asked and what
/// it was given.
final class SMTPTestHandler: SMTPHandler {
    /// Fixed answers; an address not listed is accepted.
    struct Rules: Sendable {
        /// Replies to MAIL FROM, by address.
        var senders: [String: SMTPReply] = [:]
        /// Replies to RCPT TO, by address.
        var recipients: [String: SMTPReply] = [:]
        /// The reply to every delivery; nil accepts.
        var delivery: SMTPReply?
    }

    /// The rules this handler answers by.
    let rules: Rules
    private let recorded = Mutex<(asked: [String], messages: [SMTPMessage])>(([], []))

    /// A handler with the given rules.
    init(_ rules: Rules = Rules()) {
        self.rules = rules
    }

    /// Every question, in order: `sender <address> helo <name>`, `recipient <address> from <sender>`.
    var asked: [String] { recorded.withLock { $0.asked } }

    /// Every delivered message, in order.
    var messages: [SMTPMessage] { recorded.withLock { $0.messages } }

    func sender(_ address: String, heloName: String) -> SMTPReply? {
        recorded.withLock { $0.asked.append("sender \(address) helo \(heloName)") }
        return rules.senders[address]
    }

    func recipient(_ address: String, sender: String) -> SMTPReply? {
        recorded.withLock { $0.asked.append("recipient \(address) from \(sender)") }
        return rules.recipients[address]
    }

    func deliver(_ message: SMTPMessage) -> SMTPReply? {
        recorded.withLock { $0.messages.append(message) }
        return rules.delivery
    }
}
