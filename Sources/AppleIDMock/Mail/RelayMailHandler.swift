import MiniHTTP

/// The SMTP port's decisions, as Apple's Private Email Relay makes them (apple-behaviour.md §6):
/// each recipient gets the relay's verdict at `RCPT TO` (a refused one is answered 550 with the
/// scenario's `relay_refusal` text for its reason and kept in the mailbox with that reason); a message is kept
/// with the verdict on each recipient, and copies go on to `--mail-forward` when set: a
/// forwarded one to the user's real address with `Delivered-To:` naming it (the `To:` header
/// keeps the relay address, as observed), direct mail as it came, each with the `Received:`
/// trace line a relaying server adds (RFC 5321 §4.4). A message that has passed through more
/// than `maxHops` servers is refused (§6.3: a forwarding loop). Runs on the event loops: every
/// call is an index lookup and a short lock, never I/O or a copy of the message.
struct RelayMailHandler: SMTPHandler {
    let domain: AppleIDDomain
    let mailbox: MailBox
    let forwarder: MailForwarder?
    let log: @Sendable (String) -> Void

    func sender(_ address: String, heloName: String) -> SMTPReply? { nil }

    func recipient(_ address: String, sender: String) -> SMTPReply? {
        let verdict = domain.relayVerdict(sender: sender, recipient: address)
        guard case .refuse(_, let refusal, let reason) = verdict else { return nil }
        let reply = reply(refusal, sender: sender, recipient: address)
        log("mail from <\(sender)> to <\(address)> refused: \(reason)")
        mailbox.append(MailRecord(id: 0, at: domain.now, heloName: "", overTLS: false, sender: sender,
                                  recipients: [.init(address: address, verdict: verdict, reply: reply.lines.first.map { "550 \($0)" })], raw: nil))
        return reply
    }

    /// `Received:` lines past which a message is taken to be looping.
    static let maxHops = 30

    func deliver(_ message: SMTPMessage) -> SMTPReply? {
        if Self.hops(in: message.data) > Self.maxHops {
            return SMTPReply(554, "5.4.6", "Error: too many hops (a forwarding loop?)")
        }
        // The verdicts again: an account deleted or forwarding turned off between RCPT and the
        // final dot stops the copy as Apple's relay would.
        // A recipient given twice gets one copy.
        var seen = Set<String>()
        let unique = message.recipients.filter { seen.insert($0.lowercased()).inserted }
        let recipients = unique.map { address in
            MailRecord.Recipient(address: address, verdict: domain.relayVerdict(sender: message.sender, recipient: address), reply: nil)
        }
        var record = MailRecord(id: 0, at: domain.now, heloName: message.heloName, overTLS: message.overTLS, sender: message.sender,
                                recipients: recipients, raw: message.data)
        let onward = forwarder == nil ? [] : copies(of: message, recipients: recipients)
        if let forwarder, !onward.isEmpty {
            record.forwarding = .init(target: forwarder.target, outcome: .pending, error: nil, copies: onward.count)
        }
        let id = mailbox.append(record)
        let trace = Array("Received: from \(Self.printable(message.heloName)) by appleid-mock with \(message.overTLS ? "ESMTPS" : "ESMTP") id \(id); \(MailDate.format(record.at))\r\n".utf8)
        for var copy in onward {
            copy.recordID = id
            copy.prefix += trace
            forwarder?.enqueue(copy)
        }
        return SMTPReply(250, "2.0.0", "Ok: queued as \(id)")
    }

    /// `Received:` fields in the message's header section.
    static func hops(in data: [UInt8]) -> Int {
        var count = 0
        var start = 0
        let name = Array("received:".utf8)
        while start < data.count {
            let end = data[start...].firstIndex(of: 10) ?? data.count
            var line = data[start..<end]
            if line.last == 13 { line = line.dropLast() }
            if line.isEmpty { break }
            if line.count >= name.count && zip(line.prefix(name.count), name).allSatisfy({ ($0 | 0x20) == $1 }) { count += 1 }
            start = end + 1
        }
        return count
    }

    /// The 550 for a recipient refused for `refusal`, from the scenario's text for it.
    private func reply(_ refusal: RelayRefusal, sender: String, recipient: String) -> SMTPReply {
        let text = domain.scenario.compatibility.relayRefusal[refusal]
            .replacing("{sender}", with: Self.printable(sender))
            .replacing("{recipient}", with: Self.printable(recipient))
        // A reply line is at most 512 octets (RFC 5321 §4.5.3.1.5), however long the filled-in text.
        return SMTPReply(code: 550, lines: [String(text.utf8.prefix(500)) ?? String(text.prefix(400))])
    }

    /// The copies to send on: one per forwarded recipient (its own `Delivered-To:`), one for all direct ones.
    private func copies(of message: SMTPMessage, recipients: [MailRecord.Recipient]) -> [MailForwarder.Job] {
        var jobs: [MailForwarder.Job] = []
        var direct: [String] = []
        for recipient in recipients {
            switch recipient.verdict {
            case .forward(_, let real, _, _):
                jobs.append(.init(recordID: 0, sender: message.sender, recipients: [real], prefix: Array("Delivered-To: \(real)\r\n".utf8),
                                  data: message.data))
            case .direct(let address):
                direct.append(address)
            case .refuse:
                break
            }
        }
        if !direct.isEmpty { jobs.append(.init(recordID: 0, sender: message.sender, recipients: direct, prefix: [], data: message.data)) }
        return jobs
    }

    /// `text` with anything but printable ASCII dropped: a reply line carries no CR, LF or NUL.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 32 && $0.value < 127 }.prefix(256)))
    }
}
