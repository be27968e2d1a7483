import AppleIDMock

// Input: a scenario file. Loading may reject it (with problems, each naming a JSON path); it must
// never crash. A scenario that loads must read back equal from its own `prettyJSON`.

/// Stops the process with a message libFuzzer records as a crash.
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let scenario = try Scenario.load(json: bytes)
        let pretty = scenario.prettyJSON
        do {
            let again = try Scenario.load(json: Array(pretty.utf8))
            invariant(again == scenario, "prettyJSON reads back to a different scenario:\n\(pretty)")
        } catch {
            invariant(false, "prettyJSON of a loaded scenario is rejected: \(error)\n\(pretty)")
        }
    } catch {
        invariant(!error.problems.isEmpty, "a rejection without problems")
        _ = error.description
    }
    return 0
}
