import AppleIDMock
import Dispatch
import FoundationEssentials
import Glibc
import JOSE
import MiniHTTP

// Input: a state archive, as `appleid-mock state export` writes it (the seeds are real exports,
// mutated). Whatever `StateArchive.importing` accepts must be a state the mock can serve and
// read back (issue 35: an import once accepted times that killed the mock on its clock, feed
// and dashboard routes, at every restart):
//
//   - the file it made exports, and that export imports again and exports the same text;
//   - `state show` reads it;
//   - a mock serves it (in memory, a fixed real time, no notification leaves the process) and
//     answers every read route, and a few changes, with no status outside 200-599 and no 500;
//     health, keys and discovery answer 200;
//   - stopped, the file opens again.
//
// A refused archive is fine (that is the point of the checks); it must leave no file behind.
// Files go to /dev/shm when it exists (commits sync; a memory file system makes that cheap).

private let repositoryRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(4)
    return parts.joined(separator: "/")
}()

private let scratch: String = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : "/tmp"

/// The mock's real time, fixed so runs repeat.
private let realTime = 1_800_000_000.0

nonisolated(unsafe) private var run = 0

/// Stops the process with a message libFuzzer records as a crash.
private func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant violated: \(message())") }
}

/// A receiver that is never reached: every attempt fails at once.
private struct Unreachable: NotificationTransport {
    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt {
        NotificationRecord.Attempt(at: 0, status: nil, error: "the fuzzer sends nothing")
    }
}

private func remove(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    run += 1
    let path = "\(scratch)/state-import-fuzz-\(getpid())-\(run).sqlite"
    let again = path + ".again"
    defer {
        remove(path)
        remove(again)
    }
    guard (try? StateArchive.importing(bytes, into: path)) != nil else {
        invariant(!FileManager.default.fileExists(atPath: path), "a refused import left its file behind")
        return 0
    }
    // What was accepted reads back, and its export is a fixed point.
    let exported: String
    do {
        exported = try StateArchive.export(path: path)
        _ = try StateArchive.show(path: path)
        try StateArchive.importing(Array(exported.utf8), into: again)
        let reexported = try StateArchive.export(path: again)
        invariant(reexported == exported, "export -> import -> export changed the text")
    } catch {
        fatalError("invariant violated: an accepted import does not read back: \(error)")
    }

    // Served, with the scenario the archive carries.
    guard case .object(let archive)? = try? JSONParser.parse(Array(exported.utf8)), let scenarioJSON = archive["scenario"],
          let scenario = try? Scenario.load(json: JSONWriter.compact(scenarioJSON)) else {
        fatalError("invariant violated: an exported archive's scenario does not load")
    }
    var configuration = AppleIDMockConfiguration()
    configuration.scenario = scenario
    configuration.statePath = path
    configuration.keysDirectory = repositoryRoot + "/Keys/signing"
    configuration.realTime = { realTime }
    configuration.log = { _ in }
    configuration.notificationTransport = Unreachable()
    configuration.notificationShutdownGrace = 0
    let mock: InMemoryMock
    do {
        mock = try AppleIDMockServer.inMemory(configuration)
    } catch {
        fatalError("invariant violated: an accepted import does not start: \(error)")
    }
    let user = scenario.users.first?.id ?? "nobody"
    let client = scenario.teams.first?.clients.first?.clientID ?? "nothing"
    let done = DispatchSemaphore(value: 0)
    Task {
        await serve(mock, user: user, client: client)
        await mock.stop()
        done.signal()
    }
    done.wait()
    invariant((try? StateArchive.export(path: path)) != nil, "the served file does not open again")
    return 0
}

/// Reads every route that renders the state, then changes it a little and reads again.
private func serve(_ mock: InMemoryMock, user: String, client: String) async {
    let reads = ["/auth/keys", "/.well-known/openid-configuration", "/__mock/health", "/__mock/clock", "/__mock/keys", "/__mock/users",
                 "/__mock/events?limit=1000", "/__mock/events?after=0&type=account-event", "/__mock/notifications", "/__mock/dashboard",
                 "/__mock/requests", "/__mock/requests/count?control=true", "/__mock/faults", "/__mock/mail",
                 "/__mock/credential-state?user=\(user)&client_id=\(client)"]
    for target in reads { await check(mock, .get, target, expecting: target.hasPrefix("/auth/keys") || target.contains("health") ? 200 : nil) }
    let json: HTTPHeaders = ["Host": "127.0.0.1", "Content-Type": "application/json"]
    await check(mock, .post, "/__mock/sign-in", headers: json, body: #"{"user":"\#(user)","client_id":"\#(client)"}"#)
    await check(mock, .post, "/__mock/events", headers: json, body: #"{"type":"email-disabled","user":"\#(user)","client_id":"\#(client)"}"#)
    await check(mock, .post, "/__mock/clock", headers: json, body: #"{"advance":3600}"#)
    await check(mock, .post, "/__mock/users", headers: json, body: #"{"id":"fuzz-added","email":"fuzz@example.com"}"#)
    await check(mock, .post, "/__mock/id-token", headers: json, body: #"{"user":"\#(user)","client_id":"\#(client)"}"#)
    for target in ["/__mock/clock", "/__mock/events?limit=10", "/__mock/dashboard", "/__mock/notifications"] { await check(mock, .get, target) }
}

private func check(_ mock: InMemoryMock, _ method: HTTPMethod, _ target: String, headers: HTTPHeaders = ["Host": "127.0.0.1"], body: String = "",
                   expecting expected: Int? = nil) async {
    let response = await mock.respond(method, target, headers: headers, body: Array(body.utf8))
    let code = response.status.code
    let shown = "\(method.rawValue) \(target) -> \(code) \(String(decoding: response.body.prefix(2048), as: UTF8.self))"
    invariant((200..<600).contains(code), "status outside 200..<600: \(shown)")
    invariant(code != 500, "500: an unexpected handler error: \(shown)")
    if let expected { invariant(code == expected, "expected \(expected): \(shown)") }
}
