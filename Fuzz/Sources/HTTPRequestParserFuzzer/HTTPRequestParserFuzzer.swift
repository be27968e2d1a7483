import MiniHTTP

// Input: two control bytes, then the byte stream a client sends on one connection.
//   byte 0, bits 0-1: how the stream is cut into reads: 0 all at once, 1 one byte at a time,
//                     2 fixed reads of `byte 1 + 1` bytes, 3 reads of pseudo-random sizes seeded by byte 1.
//   byte 0, bit 2:    0 the server's real `HTTPLimits()`, 1 tight limits that the fuzzer can cross.
// Every read is followed by draining `next()` until it needs more bytes (pipelining), exactly as
// `Connection` does. The same stream is also parsed in one piece: how the bytes arrive must not
// change which requests come out, nor whether the stream is rejected.

/// The observable parts of one parsed request.
private struct Parsed: Equatable {
    var method: String
    var target: String
    var path: String
    var query: String?
    var minorVersion: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    init(_ request: HTTPRequest) {
        method = request.method.rawValue
        target = request.target
        path = request.path
        query = request.query
        minorVersion = request.minorVersion
        headers = request.headers
        body = request.body
    }
}

/// What one connection's bytes produced.
private struct Outcome {
    var requests: [Parsed] = []
    var error: HTTPParseError?
    var bufferedByteCount = 0
    var hasPartialRequest = false
}

/// Stops the process with a message libFuzzer records as a crash.
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// Checks what the parser promises about every request it returns.
private func check(_ request: HTTPRequest, _ limits: HTTPLimits) {
    invariant(request.body.count <= limits.maxBodyBytes, "body of \(request.body.count) bytes over maxBodyBytes \(limits.maxBodyBytes)")
    invariant(request.headers.count <= limits.maxHeaderCount, "\(request.headers.count) headers over maxHeaderCount \(limits.maxHeaderCount)")
    invariant(request.target.utf8.first == UInt8(ascii: "/"), "target \(request.target) not in origin form")
    invariant(request.minorVersion == 0 || request.minorVersion == 1, "minor version \(request.minorVersion)")
    invariant(!request.method.rawValue.isEmpty, "empty method")
    if request.minorVersion == 1 {
        invariant(request.headers.values("Host").count == 1, "HTTP/1.1 request without exactly one Host")
    }
    // Scalars, not UTF-8 bytes: each byte that is not UTF-8 decodes to one U+FFFD (3 bytes).
    let headScalars = request.headers.reduce(0) { $0 + $1.name.unicodeScalars.count + $1.value.unicodeScalars.count }
    invariant(headScalars <= limits.maxHeadBytes, "header fields of \(headScalars) scalars over maxHeadBytes \(limits.maxHeadBytes)")
}

/// Feeds `stream` in the reads `cuts` gives, draining requests after each read.
private func parse(_ stream: UnsafeBufferPointer<UInt8>, _ limits: HTTPLimits, cuts: (Int) -> Int) -> Outcome {
    var parser = HTTPRequestParser(limits: limits)
    var outcome = Outcome()
    var offset = 0
    var appended = 0
    while offset < stream.count {
        let length = min(max(1, cuts(offset)), stream.count - offset)
        parser.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: stream[offset..<offset + length])))
        offset += length
        appended += length
        invariant(parser.bufferedByteCount <= appended, "buffered \(parser.bufferedByteCount) of \(appended) appended bytes")
        while true {
            let before = parser.bufferedByteCount
            _ = parser.isAwaitingContinue
            _ = parser.isReadingHead
            do {
                guard let request = try parser.next() else { break }
                check(request, limits)
                outcome.requests.append(Parsed(request))
                invariant(parser.bufferedByteCount < before, "a request came out without consuming bytes")
            } catch {
                outcome.error = error
                return outcome
            }
            invariant(parser.bufferedByteCount >= 0, "negative buffered byte count")
        }
    }
    outcome.bufferedByteCount = parser.bufferedByteCount
    outcome.hasPartialRequest = parser.hasPartialRequest
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 2 else { return 0 }
    let mode = data[0]
    let seed = Int(data[1])
    let stream = UnsafeBufferPointer(start: data + 2, count: size - 2)

    var limits = HTTPLimits()
    if mode & 4 != 0 {
        limits.maxHeadBytes = 256
        limits.maxHeaderCount = 6
        limits.maxBodyBytes = 64
        limits.maxChunkLineBytes = 12
    }

    var state = UInt32(seed) &* 2_654_435_761 &+ 1
    let cuts: (Int) -> Int = switch mode & 3 {
    case 0: { _ in stream.count }
    case 1: { _ in 1 }
    case 2: { _ in seed + 1 }
    default: { _ in
        state = state &* 1_103_515_245 &+ 12345
        return Int(state >> 16) % 97 + 1
    }}

    let incremental = parse(stream, limits, cuts: cuts)
    let whole = parse(stream, limits, cuts: { _ in stream.count })

    invariant(incremental.requests == whole.requests,
              "reads changed the requests: \(incremental.requests.count) vs \(whole.requests.count) in one piece")
    invariant((incremental.error == nil) == (whole.error == nil),
              "reads changed the verdict: \(String(describing: incremental.error)) vs \(String(describing: whole.error)) in one piece")
    if incremental.error == nil {
        invariant(incremental.bufferedByteCount == whole.bufferedByteCount,
                  "reads left \(incremental.bufferedByteCount) bytes buffered, one piece \(whole.bufferedByteCount)")
        invariant(incremental.hasPartialRequest == whole.hasPartialRequest, "reads changed hasPartialRequest")
    }
    return 0
}
