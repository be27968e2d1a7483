import MiniHTTP

// Input: an `application/x-www-form-urlencoded` body (also tried as a request target's query).
// Decoding may fail; when it succeeds, encoding the pairs and decoding again must give them back.

/// Stops the process with a message libFuzzer records as a crash.
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    if let form = try? HTTPForm(decoding: bytes) {
        let encoded = HTTPForm.encode(form.pairs.map { ($0.name, $0.value) })
        invariant(encoded.utf8.allSatisfy { $0 > 32 && $0 < 127 }, "encoding left a byte unescaped: \(encoded)")
        do {
            let again = try HTTPForm(decoding: Array(encoded.utf8))
            invariant(again == form, "encode/decode changed the pairs: \(encoded)")
        } catch {
            invariant(false, "own encoding rejected (\(error)): \(encoded)")
        }
        for name in form.duplicatedNames {
            invariant(form.values(name).count > 1, "\(name) listed as duplicated")
        }
        for pair in form.pairs.prefix(8) {
            invariant(form[pair.name] != nil, "\(pair.name) decoded but not found")
            invariant(HTTPForm.percentDecode(HTTPForm.escape(pair.value)) == pair.value.replacingPlus(), "escape/percentDecode changed \(pair.value)")
        }
    }

    let text = String(decoding: bytes, as: UTF8.self)
    _ = HTTPForm.percentDecode(text)
    _ = try? HTTPRequest(method: .get, target: "/?" + text).queryParameters()
    return 0
}

extension String {
    /// `escape` writes a space as `+`, which `percentDecode` (for paths) keeps as `+`.
    fileprivate func replacingPlus() -> String {
        String(decoding: utf8.map { $0 == 32 ? UInt8(ascii: "+") : $0 }, as: UTF8.self)
    }
}
