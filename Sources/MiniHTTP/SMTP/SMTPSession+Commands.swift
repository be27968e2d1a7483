extension SMTPSession {
    /// One command line, without its CRLF. Reply texts follow Postfix's smtpd where it has one.
    mutating func handleCommand(_ line: ArraySlice<UInt8>, into out: inout [UInt8]) {
        var line = line
        while line.last == UInt8(ascii: " ") { line.removeLast() }
        // RFC 5321 §4.1.1: commands are printable text and SP. A control byte (NUL, a bare CR, a
        // TAB) or an empty line is a syntax error, never part of a verb or an argument.
        guard !line.isEmpty, !line.contains(where: { $0 < 32 || $0 == 127 }) else {
            refuse(SMTPReply(500, "5.5.2", "Error: bad syntax"), into: &out)
            return
        }
        let space = line.firstIndex(of: UInt8(ascii: " ")) ?? line.endIndex
        let verb = String(decoding: SMTPSyntax.uppercased(line[line.startIndex..<space]), as: UTF8.self)
        var arguments = line[space...]
        while arguments.first == UInt8(ascii: " ") { arguments.removeFirst() }

        switch verb {
        case "EHLO", "HELO": hello(extended: verb == "EHLO", arguments, into: &out)
        case "MAIL": mail(arguments, into: &out)
        case "RCPT": recipient(arguments, into: &out)
        case "DATA": data(arguments, into: &out)
        case "RSET":
            guard arguments.isEmpty else { return refuse(SMTPReply(501, "5.5.4", "Syntax: RSET"), into: &out) }
            transaction = nil
            out += SMTPReply(250, "2.0.0", "Ok").bytes
        case "NOOP":
            // RFC 5321 §4.1.1.9: NOOP may carry a string, which is ignored.
            out += SMTPReply(250, "2.0.0", "Ok").bytes
        case "QUIT":
            guard arguments.isEmpty else { return refuse(SMTPReply(501, "5.5.4", "Syntax: QUIT"), into: &out) }
            out += SMTPReply(221, "2.0.0", "Bye").bytes
            phase = .closed
        case "VRFY":
            // RFC 5321 §3.5.3: 252 says "cannot verify, but will try": it reveals no mailbox.
            guard !arguments.isEmpty else { return refuse(SMTPReply(501, "5.5.4", "Syntax: VRFY address"), into: &out) }
            out += SMTPReply(252, "2.0.0", "Cannot VRFY user, but will accept message and attempt delivery").bytes
        case "HELP":
            out += SMTPReply(214, "2.0.0", "Commands: EHLO HELO MAIL RCPT DATA RSET NOOP QUIT VRFY HELP STARTTLS").bytes
        case "STARTTLS": startTLS(arguments, into: &out)
        case "AUTH":
            refuse(SMTPReply(502, "5.5.1", "Error: authentication not enabled"), into: &out)
        default:
            // BDAT (CHUNKING, RFC 3030), EXPN, ETRN and the rest are not offered.
            refuse(SMTPReply(502, "5.5.2", "Error: command not recognized"), into: &out)
        }
    }

    /// EHLO or HELO (RFC 5321 §4.1.1.1): a domain or address literal; resets any transaction.
    private mutating func hello(extended: Bool, _ arguments: ArraySlice<UInt8>, into out: inout [UInt8]) {
        guard SMTPSyntax.isDomain(arguments, allowingUnderscore: true) || SMTPSyntax.isAddressLiteral(arguments) else {
            return refuse(SMTPReply(501, "5.5.4", "Syntax: \(extended ? "EHLO" : "HELO") hostname"), into: &out)
        }
        heloName = String(decoding: arguments, as: UTF8.self)
        transaction = nil
        guard extended else {
            out += SMTPReply(code: 250, lines: [hostname]).bytes
            return
        }
        // RFC 2034 §3: no enhanced status code in the EHLO reply.
        var lines = [hostname, "PIPELINING", "SIZE \(limits.maxMessageBytes)", "8BITMIME", "ENHANCEDSTATUSCODES"]
        if tlsAvailable && !tlsActive { lines.append("STARTTLS") }
        out += SMTPReply(code: 250, lines: lines).bytes
    }

    /// MAIL FROM:<reverse-path> [SIZE=n] [BODY=7BIT|8BITMIME] (RFC 5321 §4.1.1.2, RFC 1870, RFC 6152).
    private mutating func mail(_ arguments: ArraySlice<UInt8>, into out: inout [UInt8]) {
        guard let heloName else { return refuse(SMTPReply(503, "5.5.1", "Error: send HELO/EHLO first"), into: &out) }
        guard transaction == nil else { return refuse(SMTPReply(503, "5.5.1", "Error: nested MAIL command"), into: &out) }
        let path: ArraySlice<UInt8>
        let parameters: ArraySlice<UInt8>
        switch Self.splitPath(arguments, keyword: "FROM:") {
        case .syntax: return refuse(SMTPReply(501, "5.5.4", "Syntax: MAIL FROM:<address>"), into: &out)
        case .badPath: return refuse(SMTPReply(501, "5.1.7", "Bad sender address syntax"), into: &out)
        case .tooLong: return refuse(SMTPReply(501, "5.1.7", "Error: path too long"), into: &out)
        case .path(let inside, let rest):
            path = inside
            parameters = rest
        }
        let sender: String
        if path.isEmpty {
            sender = ""  // the null reverse-path (RFC 5321 §4.5.5)
        } else {
            guard let mailbox = SMTPSyntax.mailbox(inPath: path) else {
                return refuse(SMTPReply(501, "5.1.7", "Bad sender address syntax"), into: &out)
            }
            sender = mailbox
        }
        var eightBitMIME = false
        for parameter in parameters.split(separator: UInt8(ascii: " ")) {
            let equals = parameter.firstIndex(of: UInt8(ascii: "=")) ?? parameter.endIndex
            let keyword = String(decoding: SMTPSyntax.uppercased(parameter[parameter.startIndex..<equals]), as: UTF8.self)
            let value = parameter[equals...].dropFirst()
            let hasValue = equals < parameter.endIndex
            switch keyword {
            case "SIZE" where hasValue:
                // RFC 1870 §6: size-value = 1*20DIGIT. Beyond 18 digits it is over any limit.
                guard !value.isEmpty, value.count <= 20, value.allSatisfy({ (48...57).contains($0) }) else {
                    return refuse(SMTPReply(501, "5.5.4", "Bad message size syntax"), into: &out)
                }
                if value.count > 18 || Int(String(decoding: value, as: UTF8.self)).map({ $0 > limits.maxMessageBytes }) ?? true {
                    out += SMTPReply(552, "5.3.4", "Message size exceeds fixed limit").bytes
                    return
                }
            case "BODY" where hasValue:
                switch String(decoding: SMTPSyntax.uppercased(value), as: UTF8.self) {
                case "7BIT": eightBitMIME = false
                case "8BITMIME": eightBitMIME = true
                default: return refuse(SMTPReply(501, "5.5.4", "Bad BODY keyword syntax"), into: &out)
                }
            default:
                return refuse(SMTPReply(555, "5.5.4", "Unsupported option: \(String(decoding: parameter, as: UTF8.self))"), into: &out)
            }
        }
        let verdict = handler.sender(sender, heloName: heloName) ?? SMTPReply(250, "2.1.0", "Ok")
        if verdict.isPositive { transaction = Transaction(sender: sender, eightBitMIME: eightBitMIME) }
        send(verdict, into: &out)
    }

    /// RCPT TO:<forward-path> (RFC 5321 §4.1.1.3); `<postmaster>` without a domain is accepted.
    private mutating func recipient(_ arguments: ArraySlice<UInt8>, into out: inout [UInt8]) {
        guard var current = transaction else { return refuse(SMTPReply(503, "5.5.1", "Error: need MAIL command"), into: &out) }
        let path: ArraySlice<UInt8>
        let parameters: ArraySlice<UInt8>
        switch Self.splitPath(arguments, keyword: "TO:") {
        case .syntax: return refuse(SMTPReply(501, "5.5.4", "Syntax: RCPT TO:<address>"), into: &out)
        case .badPath: return refuse(SMTPReply(501, "5.1.3", "Bad recipient address syntax"), into: &out)
        case .tooLong: return refuse(SMTPReply(501, "5.1.3", "Error: path too long"), into: &out)
        case .path(let inside, let rest):
            path = inside
            parameters = rest
        }
        let address: String
        if SMTPSyntax.uppercased(path) == Array("POSTMASTER".utf8) {
            address = String(decoding: path, as: UTF8.self)  // RFC 5321 §4.1.1.3, §4.5.1
        } else if let mailbox = SMTPSyntax.mailbox(inPath: path) {
            address = mailbox
        } else {
            // The null path `<>` lands here too: it is never a recipient.
            return refuse(SMTPReply(501, "5.1.3", "Bad recipient address syntax"), into: &out)
        }
        if let parameter = parameters.split(separator: UInt8(ascii: " ")).first {
            // No extension with RCPT parameters (DSN's NOTIFY, ORCPT) is offered.
            return refuse(SMTPReply(555, "5.5.4", "Unsupported option: \(String(decoding: parameter, as: UTF8.self))"), into: &out)
        }
        current.triedRecipient = true
        defer { transaction = current }
        guard current.recipients.count < limits.maxRecipients else {
            out += SMTPReply(452, "4.5.3", "Error: too many recipients").bytes
            return
        }
        let verdict = handler.recipient(address, sender: current.sender) ?? SMTPReply(250, "2.1.5", "Ok")
        if verdict.isPositive { current.recipients.append(address) }
        // A permanent refusal counts against maxErrors, as Postfix's hard error limit does: a
        // client cannot try recipients without end on one connection.
        if (500..<600).contains(verdict.code) { refuse(verdict, into: &out) } else { send(verdict, into: &out) }
    }

    /// DATA (RFC 5321 §4.1.1.4): the message text follows once there is a recipient.
    private mutating func data(_ arguments: ArraySlice<UInt8>, into out: inout [UInt8]) {
        guard arguments.isEmpty else { return refuse(SMTPReply(501, "5.5.4", "Syntax: DATA"), into: &out) }
        guard let current = transaction, !current.recipients.isEmpty else {
            if transaction?.triedRecipient == true {
                out += SMTPReply(554, "5.5.1", "Error: no valid recipients").bytes
                return
            }
            return refuse(SMTPReply(503, "5.5.1", "Error: need RCPT command"), into: &out)
        }
        out += SMTPReply(354, nil, "End data with <CR><LF>.<CR><LF>").bytes
        incoming = Incoming()
        phase = .data
    }

    /// STARTTLS (RFC 3207 §4): only without arguments, when offered, outside a transaction.
    private mutating func startTLS(_ arguments: ArraySlice<UInt8>, into out: inout [UInt8]) {
        guard arguments.isEmpty else { return refuse(SMTPReply(501, "5.5.4", "Syntax: STARTTLS"), into: &out) }
        guard !tlsActive else { return refuse(SMTPReply(503, "5.5.1", "Error: TLS already active"), into: &out) }
        guard tlsAvailable else {
            out += SMTPReply(454, "4.7.0", "TLS not available").bytes
            return
        }
        guard transaction == nil else { return refuse(SMTPReply(503, "5.5.1", "Error: MAIL transaction in progress"), into: &out) }
        out += SMTPReply(220, "2.0.0", "Ready to start TLS").bytes
        line.removeAll()
        lineTooLong = false
        pendingCR = false
        phase = .awaitingTLS
    }

    /// The line holding one dot ended the data: refuse what broke a rule, else ask the handler.
    /// The transaction ends either way; EHLO is kept (RFC 5321 §4.1.1.4).
    mutating func finishMessage(into out: inout [UInt8]) {
        let received = incoming
        incoming = Incoming()
        phase = .command
        guard let current = transaction else {
            // DATA needs a transaction and nothing ends it while text arrives; answer anyway.
            out += SMTPReply(503, "5.5.1", "Error: need RCPT command").bytes
            return
        }
        transaction = nil
        // One verdict, the first that applies: size, then line length, then NUL.
        if received.tooBig {
            out += SMTPReply(552, "5.3.4", "Error: message file too big").bytes
        } else if received.lineTooLong {
            // RFC 5321 §4.5.3.1.6 / §4.5.3.1.10: a text line over 1000 octets; 500 "Line too long".
            out += SMTPReply(500, "5.5.2", "Error: message line too long").bytes
        } else if received.hasNUL {
            out += SMTPReply(554, "5.6.0", "Error: message contains NUL characters").bytes
        } else {
            let message = SMTPMessage(heloName: heloName ?? "", sender: current.sender, recipients: current.recipients,
                                      data: received.bytes, eightBitMIME: current.eightBitMIME, overTLS: tlsActive)
            send(handler.deliver(message) ?? SMTPReply(250, "2.0.0", "Ok: queued"), into: &out)
        }
    }

    /// How `FROM:<path> params` or `TO:<path> params` split.
    private enum PathSplit {
        /// Not `KEYWORD<...>`: the command's syntax is wrong.
        case syntax
        /// A `<` without its `>`, or something other than a space after the `>`.
        case badPath
        /// The path, brackets included, is over 256 bytes (RFC 5321 §4.5.3.1.3).
        case tooLong
        /// The bytes between the brackets, and the parameters after them.
        case path(ArraySlice<UInt8>, parameters: ArraySlice<UInt8>)
    }

    /// Splits MAIL's or RCPT's arguments after `keyword` (`FROM:` or `TO:`, any case), allowing
    /// spaces after the colon as most servers do.
    private static func splitPath(_ arguments: ArraySlice<UInt8>, keyword: String) -> PathSplit {
        guard SMTPSyntax.hasPrefix(arguments, caseInsensitive: keyword) else { return .syntax }
        var rest = arguments.dropFirst(keyword.utf8.count)
        while rest.first == UInt8(ascii: " ") { rest.removeFirst() }
        guard rest.first == UInt8(ascii: "<") else { return .syntax }
        guard let end = SMTPSyntax.pathEnd(rest, from: rest.startIndex) else { return .badPath }
        guard end - rest.startIndex <= SMTPSyntax.maxPathBytes else { return .tooLong }
        let parameters = rest[end...]
        guard parameters.isEmpty || parameters.first == UInt8(ascii: " ") else { return .badPath }
        return .path(rest[(rest.startIndex + 1)..<(end - 1)], parameters: parameters)
    }
}
