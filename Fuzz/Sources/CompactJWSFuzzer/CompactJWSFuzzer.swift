import JOSE

// Input: tried three ways. (1) As compact JWS text for `CompactJWS.parse`. (2) As a JSON document
// for `JSONParser`: whatever it accepts, `JSONWriter` output must parse back to an equal value,
// byte-stably. (3) As the JSON header and payload of a token built around it, so the fuzzer can
// mutate header JSON without having to find base64url.

/// Stops the process with a message libFuzzer records as a crash.
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// JSON text that the parser accepted must survive every writer.
private func checkRoundTrip(_ value: JSONValue) {
    let compact = JSONWriter.compact(value)
    guard let reparsed = try? JSONParser.parse(compact) else {
        fatalError("invariant violated: compact output does not parse: \(String(decoding: compact, as: UTF8.self))")
    }
    invariant(reparsed == value, "compact output parses to a different value: \(String(decoding: compact, as: UTF8.self))")
    invariant(JSONWriter.compact(reparsed) == compact, "compact output is not byte-stable")

    let pretty = JSONWriter.pretty(value)
    invariant((try? JSONParser.parse(pretty)) == value, "pretty output parses to a different value: \(pretty)")

    let sorted = JSONWriter.sortedCompact(value)
    guard let sortedValue = try? JSONParser.parse(sorted) else {
        fatalError("invariant violated: sorted output does not parse: \(String(decoding: sorted, as: UTF8.self))")
    }
    invariant(JSONWriter.sortedCompact(sortedValue) == sorted, "sorted output is not byte-stable")
}

/// Reads everything a parsed token offers and checks it against the text it came from.
private func checkToken(_ jws: CompactJWS, text: String) {
    invariant(jws.compact == text, "compact form differs from the parsed text")
    invariant(jws.algorithm != nil, "parsed token without a string alg")
    _ = jws.keyID
    invariant(jws.signingInput == Array(text.utf8.prefix(jws.signingInput.count)), "signing input is not the token's prefix")
    invariant(Base64URL.decode(jws.payloadSegment) == jws.payload, "payload segment does not decode to the payload")
    invariant(Base64URL.encode(jws.payload) == jws.payloadSegment, "payload is not canonically encoded")
    checkRoundTrip(.object(jws.header))
    if let payload = jws.payloadJSON { checkRoundTrip(.object(payload)) }
    let rebuilt = CompactJWS(header: jws.header, payload: jws.payload, signature: jws.signature)
    guard let reparsed = try? CompactJWS.parse(rebuilt.compact) else {
        fatalError("invariant violated: a token rebuilt from parsed parts does not parse")
    }
    invariant(reparsed.header == jws.header && reparsed.payload == jws.payload && reparsed.signature == jws.signature,
              "a token rebuilt from parsed parts parses differently")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    let text = String(decoding: bytes, as: UTF8.self)
    if let jws = try? CompactJWS.parse(text) { checkToken(jws, text: text) }

    if let value = try? JSONParser.parse(bytes) { checkRoundTrip(value) }
    _ = try? JSONParser.parse(bytes, maxDepth: 3)

    if let decoded = Base64URL.decode(text) {
        invariant(Base64URL.encode(decoded) == text, "base64url decoding is not canonical")
    }

    let built = Base64URL.encode(bytes) + "." + Base64URL.encode(bytes) + "." + Base64URL.encode(bytes.prefix(64))
    if let jws = try? CompactJWS.parse(built) { checkToken(jws, text: built) }
    return 0
}
