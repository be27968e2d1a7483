import MiniHTTP
import Synchronization

// Input: two control bytes, then the byte stream a client sends on one SMTP connection.
//   byte 0, bits 0-1: how the stream is cut into reads: 0 all at once, 1 one byte at a time,
//                     2 fixed reads of `byte 1 + 1` bytes, 3 reads of pseudo-random sizes seeded by byte 1.
//   byte 0, bit 2:    0 the real `SMTPLimits()`, 1 tight limits that the fuzzer can cross.
//   byte 0, bit 3:    1 the session may offer STARTTLS.
// After each read: the session holds no more than its bound, and what it sends is well-formed
// replies. On `.startTLS` the rest of that read is dropped (as the owner does) and the handshake
// "succeeds" at once. The same stream is also fed in one piece: up to the first STARTTLS (after
// which what is discarded depends on the reads), the cut must not change replies or deliveries.

/// Stops the process with a message libFuzzer records as a crash.
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// FNV-1a, for verdicts that depend on the input but on nothing else.
private func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
    bytes.reduce(2_166_136_261) { ($0 ^ UInt32($1)) &* 16_777_619 }
}

/// Accepts or refuses by a hash of what it is asked, with ordinary, multiline, closing (421),
/// out-of-range and CRLF-carrying replies; records what it delivered.
private final class FuzzHandler: SMTPHandler {
    let limits: SMTPLimits
    let delivered = Mutex<[String]>([])

    init(limits: SMTPLimits) {
        self.limits = limits
    }

    private static func verdict(_ key: String, accept: SMTPReply?) -> SMTPReply? {
        switch hash(key.utf8) % 16 {
        case 0, 1, 2: SMTPReply(550, "5.1.1", "<\(key)>: refused")
        case 3: SMTPReply(code: 451, lines: ["4.3.0 first", "4.3.0 second"])
        case 4: SMTPReply(421, "4.3.2", "closing")
        case 5: SMTPReply(99, nil, "odd code\r\n250 forged")
        case 6: SMTPReply(code: 250, lines: [])
        case 7: SMTPReply(code: 250, lines: ["2.1.0 a", "2.1.0 b"])
        default: accept
        }
    }

    func sender(_ address: String, heloName: String) -> SMTPReply? {
        Self.verdict("s" + address, accept: nil)
    }

    func recipient(_ address: String, sender: String) -> SMTPReply? {
        Self.verdict("r" + address, accept: nil)
    }

    func deliver(_ message: SMTPMessage) -> SMTPReply? {
        checkMessage(message, limits)
        delivered.withLock {
            $0.append("\(message.heloName)|\(message.sender)|\(message.recipients)|\(hash(message.data))|\(message.data.count)|\(message.eightBitMIME)|\(message.overTLS)")
        }
        return Self.verdict("d\(hash(message.data))", accept: nil)
    }
}

/// Checks that `bytes` are whole replies: lines of three digits, `-` or SP, text, CRLF; no CR or
/// LF inside a line; a `-` line followed by a line of the same code; the last line ending the reply.
private func checkReplies(_ bytes: [UInt8]) {
    guard !bytes.isEmpty else { return }
    invariant(bytes.count >= 2 && bytes[bytes.count - 2] == 13 && bytes[bytes.count - 1] == 10, "output does not end with CRLF")
    var lineStart = 0
    var continuing: ArraySlice<UInt8>?
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if byte == 13 || byte == 10 {
            invariant(byte == 13 && index + 1 < bytes.count && bytes[index + 1] == 10, "bare CR or LF in output at \(index)")
            let line = bytes[lineStart..<index]
            invariant(line.count >= 4, "reply line shorter than 4 bytes")
            let code = line.prefix(3)
            invariant(code.allSatisfy { (48...57).contains($0) }, "reply code not three digits")
            invariant((2...5).contains(code[code.startIndex] - 48), "reply code outside 2xx-5xx")
            let separator = line[line.startIndex + 3]
            invariant(separator == 32 || separator == 45, "no SP or - after the reply code")
            if let continuing { invariant(continuing == code, "multiline reply changed code") }
            continuing = separator == 45 ? code : nil
            index += 2
            lineStart = index
            continue
        }
        index += 1
    }
    invariant(continuing == nil, "output ends inside a multiline reply")
}

/// Checks what the session promises about every delivered message: within the limits, no NUL,
/// lines ended by CRLF and none longer than a text line.
private func checkMessage(_ message: SMTPMessage, _ limits: SMTPLimits) {
    let data = message.data
    invariant(data.count <= limits.maxMessageBytes, "message of \(data.count) bytes over maxMessageBytes")
    invariant((1...limits.maxRecipients).contains(message.recipients.count), "\(message.recipients.count) recipients")
    invariant(!data.contains(0), "NUL in a delivered message")
    invariant(data.isEmpty || data.suffix(2) == [13, 10], "message does not end with CRLF")
    var lineLength = 0
    for (index, byte) in data.enumerated() {
        if byte == 10 {
            invariant(index > 0 && data[index - 1] == 13, "bare LF in a delivered message")
            invariant(lineLength - 1 <= limits.maxTextLineBytes - 2, "delivered line of \(lineLength - 1) bytes over maxTextLineBytes")
            lineLength = 0
        } else {
            lineLength += 1
        }
    }
}

/// Checks that the session's buffers are within their bound.
private func checkBounds(_ session: SMTPSession, _ limits: SMTPLimits) {
    _ = session.isClosed
    invariant(session.bufferedBytes >= 0, "negative bufferedBytes")
    invariant(session.bufferedBytes <= max(limits.maxCommandLineBytes, limits.maxMessageBytes),
              "bufferedBytes \(session.bufferedBytes) over the bound")
    invariant(session.bufferedBytes <= limits.maxMessageBytes + limits.maxTextLineBytes + 16, "bufferedBytes over the documented bound")
}

/// What one feeding produced.
private struct Outcome {
    var output: [UInt8] = []
    /// The output up to and including the reply that asked for STARTTLS, if one did.
    var beforeTLS: [UInt8]?
    var closed = false
    var delivered: [String] = []
    var deliveredBeforeTLS: [String]?
}

/// Feeds `stream` in the reads `cuts` gives.
private func run(_ stream: UnsafeBufferPointer<UInt8>, _ limits: SMTPLimits, tls: Bool, cuts: (Int) -> Int) -> Outcome {
    let handler = FuzzHandler(limits: limits)
    var session = SMTPSession(hostname: "mx.fuzz", limits: limits, tlsAvailable: tls, handler: handler)
    var outcome = Outcome()
    var offset = 0
    while offset < stream.count {
        let length = min(max(1, cuts(offset)), stream.count - offset)
        let output = session.receive(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: stream[offset..<offset + length])))
        offset += length
        checkReplies(output.bytes)
        checkBounds(session, limits)
        if outcome.closed { invariant(output.bytes.isEmpty && output.action == .close, "a closed session answered") }
        outcome.output += output.bytes
        switch output.action {
        case .none:
            invariant(!session.isClosed, "closed without asking to close")
        case .close:
            invariant(session.isClosed, "asked to close but is not closed")
            outcome.closed = true
        case .startTLS:
            invariant(tls, "STARTTLS accepted without TLS available")
            invariant(session.bufferedBytes == 0, "bytes kept across STARTTLS")
            if outcome.beforeTLS == nil {
                outcome.beforeTLS = outcome.output
                outcome.deliveredBeforeTLS = handler.delivered.withLock { $0 }
            }
            session.tlsStarted()
        }
    }
    outcome.delivered = handler.delivered.withLock { $0 }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 2 else { return 0 }
    let mode = data[0]
    let seed = Int(data[1])
    let stream = UnsafeBufferPointer(start: data + 2, count: size - 2)

    var limits = SMTPLimits()
    if mode & 4 != 0 {
        limits.maxCommandLineBytes = 40
        limits.maxTextLineBytes = 30
        limits.maxMessageBytes = 200
        limits.maxRecipients = 3
        limits.maxErrors = 4
    }
    let tls = mode & 8 != 0

    var state = UInt32(seed) &* 2_654_435_761 &+ 1
    let cuts: (Int) -> Int = switch mode & 3 {
    case 0: { _ in stream.count }
    case 1: { _ in 1 }
    case 2: { _ in seed + 1 }
    default: { _ in
        state = state &* 1_103_515_245 &+ 12345
        return Int(state >> 16) % 97 + 1
    }}

    let incremental = run(stream, limits, tls: tls, cuts: cuts)
    let whole = run(stream, limits, tls: tls, cuts: { _ in stream.count })

    invariant((incremental.beforeTLS == nil) == (whole.beforeTLS == nil), "reads changed whether STARTTLS was accepted")
    if let before = whole.beforeTLS {
        invariant(incremental.beforeTLS == before, "reads changed the replies before STARTTLS")
        invariant(incremental.deliveredBeforeTLS == whole.deliveredBeforeTLS, "reads changed the deliveries before STARTTLS")
    } else {
        invariant(incremental.output == whole.output,
                  "reads changed the replies: \(String(decoding: incremental.output, as: UTF8.self)) vs \(String(decoding: whole.output, as: UTF8.self))")
        invariant(incremental.delivered == whole.delivered, "reads changed the deliveries")
        invariant(incremental.closed == whole.closed, "reads changed whether the session closed")
    }
    return 0
}
