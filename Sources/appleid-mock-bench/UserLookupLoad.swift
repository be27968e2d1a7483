import Foundation
import Synchronization

/// Lookups by `sub` with many users loaded: a mock with `users` users (added
/// through `POST /__mock/users`) against one with 10. In each, a user added last signs in with a
/// hidden email, then `POST /__mock/events` alternates email-disabled and email-enabled on that
/// user by `sub`: first alone (events/s), then while `/auth/token` redeems codes (its p99). With
/// an index both match the 10-user mock; with a scan under the state lock they fall with users.
struct UserLookupLoad {
    /// One mock's figures.
    struct Run {
        /// Users the mock held.
        var users: Int
        /// Account events per second, sent one after another on one connection.
        var eventsPerSecond: Double
        /// `/auth/token` redemption latency while events run, milliseconds.
        var tokenP50: Double
        var tokenP99: Double
        /// Requests that did not answer as expected.
        var failures: Int
    }

    /// The mock with 10 users, and the one with many.
    let few: Run
    let many: Run

    /// Events/s with 10 users over events/s with many (the target is at most 2).
    var eventsRatio: Double { many.eventsPerSecond > 0 ? few.eventsPerSecond / many.eventsPerSecond : .infinity }
    /// Token p99 with many users over p99 with 10 (the target is at most 2).
    var tokenP99Ratio: Double { few.tokenP99 > 0 ? many.tokenP99 / few.tokenP99 : .infinity }

    /// Runs both mocks: `events` events alone, then `exchanges` redemptions over `connections`
    /// connections with events running beside them.
    static func run(binary: String, secret: String, users: Int, events: Int, exchanges: Int, connections: Int, threads: Int,
                    progress: (String) -> Void) throws -> UserLookupLoad {
        progress("10 users: \(events) account events by sub, then \(exchanges) code exchanges beside events")
        let few = try measure(binary: binary, secret: secret, users: 10, events: events, exchanges: exchanges, connections: connections, threads: threads)
        progress("\(users) users: the same")
        let many = try measure(binary: binary, secret: secret, users: users, events: events, exchanges: exchanges, connections: connections, threads: threads)
        return UserLookupLoad(few: few, many: many)
    }

    private static func measure(binary: String, secret: String, users: Int, events: Int, exchanges: Int, connections: Int, threads: Int) throws -> Run {
        let server = try ServerProcess.startMock(binary: binary)
        defer { server.stop() }
        // The built-in scenario's users, then runtime users u0, u1, … up to `users` in all (the
        // mock holds at most 100,000).
        let listed = try RawConnection(port: server.port).exchange(Array("GET /__mock/users HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        guard listed.status == 200, let builtIn = ((try? JSONSerialization.jsonObject(with: Data(listed.body))) as? [String: Any])?["users"] as? [Any] else {
            throw ServerProcess.Failure(description: "GET /__mock/users answered \(listed.status)")
        }
        let added = max(0, users - builtIn.count)
        let adders = try (0..<min(4, max(1, added))).map { _ in try RawConnection(port: server.port) }
        var failures = LoadDriver.run(adders, threads: min(threads, adders.count)) { index in
            let mine = stride(from: index, to: added, by: adders.count).map { addRequest("u\($0)") }
            return LoadDriver.Script(requests: mine) { _, status, _, _ in status == 201 || status == 200 }
        }
        let last = added > 0 ? "u\(added - 1)" : "bob"
        let control = try RawConnection(port: server.port)
        let signIn = try control.exchange(NotificationLoad.request("/__mock/sign-in", #"{"user":"\#(last)","client_id":"com.example.app","scopes":["email"],"hide_email":true}"#))
        guard signIn.status == 200, let answer = try? JSONSerialization.jsonObject(with: Data(signIn.body)) as? [String: Any],
              let sub = answer["user"] as? String else {
            throw ServerProcess.Failure(description: "native sign-in of \(last) answered \(signIn.status)")
        }
        // Events alone.
        let start = Stopwatch.now()
        for index in 0..<events where try control.exchange(eventRequest(sub: sub, index: index)).status != 202 { failures += 1 }
        let eventsPerSecond = Double(events) / (Double(Stopwatch.now() - start) / 1e9)
        // Codes first, then their redemption timed while another thread sends events.
        let clients = try (0..<connections).map { _ in try RawConnection(port: server.port) }
        let codes = ExchangeLoad.Collected(connections)
        failures += LoadDriver.run(clients, threads: threads) { index in
            let share = exchanges / connections + (index < exchanges % connections ? 1 : 0)
            return LoadDriver.Script(requests: Array(repeating: ExchangeLoad.authorizeRequest, count: share)) { _, status, body, _ in
                guard status == 200, let code = ExchangeLoad.code(in: body) else { return false }
                codes.codes[index].append(code)
                return true
            }
        }
        let stop = Atomic<Bool>(false)
        let eventFailures = Atomic<Int>(0)
        let done = DispatchGroup()
        done.enter()
        Thread.detachNewThread {
            defer { done.leave() }
            var index = 0
            while !stop.load(ordering: .relaxed) {
                if (try? control.exchange(eventRequest(sub: sub, index: index)).status) != 202 { eventFailures.add(1, ordering: .relaxed) }
                index += 1
            }
        }
        let latencies = ExchangeLoad.Collected(connections)
        failures += LoadDriver.run(clients, threads: threads) { index in
            LoadDriver.Script(requests: codes.codes[index].map { ExchangeLoad.tokenRequest(code: $0, secret: secret) }) { _, status, _, milliseconds in
                guard status == 200 else { return false }
                latencies.latencies[index].append(milliseconds)
                return true
            }
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        let percentiles = Percentiles(latencies.latencies.flatMap { $0 })
        return Run(users: users, eventsPerSecond: eventsPerSecond, tokenP50: percentiles.median, tokenP99: percentiles.value(0.99),
                   failures: failures + eventFailures.load(ordering: .relaxed))
    }

    private static func addRequest(_ id: String) -> [UInt8] {
        NotificationLoad.request("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com"}"#)
    }

    private static func eventRequest(sub: String, index: Int) -> [UInt8] {
        NotificationLoad.request("/__mock/events", #"{"type":"\#(index % 2 == 0 ? "email-disabled" : "email-enabled")","user":"\#(sub)","client_id":"com.example.app"}"#)
    }
}
