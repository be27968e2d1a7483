import Foundation
import Glibc

/// Server-to-server notifications under load: a mock whose scenario sends its notifications to
/// a local receiver gets `count` account events (bob's relay forwarding off and on, in turn)
/// over one keep-alive connection; the receiver notes when each arrives. Latency is receipt
/// time minus the event's own `event_time` (milliseconds, the mock clock on real time).
///
/// Two batches of `count / 2`: the first starts the delivery workers and fills the delivery log
/// (which keeps every record, JWT included, up to its bound of 10,000), so memory from idle to
/// its end is the cost of the logged notifications; then the log is cleared and the second batch
/// runs, so memory across it shows whether anything but the log grows with the events (flat
/// within 10%). Counts and latencies are the second batch's.
///
/// Endurance (every event once cost more than the last): the events go in blocks of
/// `blockSize` (10,000 for a full run), each timed by the server's CPU and the wall clock; the
/// first block's cost per event against the last's must stay within 1.5x, and memory from the
/// end of the first block (the log full) to the end of the first batch must stay flat.
struct NotificationLoad {
    let sent: Int
    let delivered: Int
    let p50: Double
    let p99: Double
    /// Resident MiB with no notification sent yet.
    let residentIdle: Double
    /// After the first batch, its records in the log.
    let residentLogged: Double
    /// After the log was cleared, before the second batch.
    let residentBefore: Double
    /// After the second batch, its records in the log.
    let residentAfter: Double
    /// Events per timed block.
    let blockSize: Int
    /// Server CPU and wall time per event (microseconds) of the first and of the last block.
    let firstBlock: BlockCost
    let lastBlock: BlockCost
    /// Resident MiB after the first block (the delivery log full on a full run).
    let residentLogFull: Double

    /// What one block of events cost, per event.
    struct BlockCost {
        /// Server CPU (user + system), microseconds per event.
        var cpuMicroseconds: Double
        /// Wall time of sending the block, reading every answer and receiving its notifications,
        /// microseconds per event.
        var wallMicroseconds: Double
    }

    /// The last block's server CPU per event over the first's (the target is at most 1.5).
    var costRatio: Double { firstBlock.cpuMicroseconds > 0 ? lastBlock.cpuMicroseconds / firstBlock.cpuMicroseconds : 0 }

    /// Memory growth from the log being full to the end of the first batch, percent.
    var growthAfterLogFull: Double { residentLogFull > 0 ? (residentLogged - residentLogFull) / residentLogFull * 100 : 0 }

    /// Runs the load; the receiver waits at most `deadline` seconds for the last notification.
    static func run(binary: String, count: Int, deadline: Double) throws -> NotificationLoad {
        let receiver = try Receiver()
        defer { receiver.stop() }
        let scenario = try scenarioFile(binary: binary, receiver: receiver)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        let server = try ServerProcess.startMock(binary: binary, arguments: ["--scenario", scenario])
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let signIn = #"{"user":"bob","client_id":"com.example.app","scopes":["email"],"hide_email":true}"#
        guard try connection.exchange(request("/__mock/sign-in", signIn)).status == 200 else {
            throw ServerProcess.Failure(description: "native sign-in for the notification load failed")
        }
        usleep(200_000)
        let half = max(1, count / 2)
        let blockSize = max(1, min(10_000, half / 5))
        let idle = server.residentMiB
        var blocks: [BlockCost] = []
        var residentLogFull = 0.0
        let first = try batch(count: half, blockSize: blockSize, connection: connection, receiver: receiver, server: server, deadline: deadline) { cost in
            if blocks.isEmpty { residentLogFull = server.residentMiB }
            blocks.append(cost)
        }
        let logged = server.residentMiB
        guard try connection.exchange(Array("DELETE /__mock/notifications HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)).status == 200 else {
            throw ServerProcess.Failure(description: "clearing the delivery log failed")
        }
        usleep(200_000)
        let before = server.residentMiB
        let second = try batch(count: half, blockSize: blockSize, connection: connection, receiver: receiver, server: server, deadline: deadline) {
            blocks.append($0)
        }
        let percentiles = Percentiles(second.latencies)
        return NotificationLoad(sent: first.sent + second.sent, delivered: first.latencies.count + second.latencies.count,
                                p50: percentiles.value(0.5), p99: percentiles.value(0.99),
                                residentIdle: idle, residentLogged: logged, residentBefore: before, residentAfter: server.residentMiB,
                                blockSize: blockSize, firstBlock: blocks.first ?? BlockCost(cpuMicroseconds: 0, wallMicroseconds: 0),
                                lastBlock: blocks.last ?? BlockCost(cpuMicroseconds: 0, wallMicroseconds: 0), residentLogFull: residentLogFull)
    }

    /// A temporary scenario file: the built-in scenario with its team's notifications sent to
    /// `receiver` (the caller removes it).
    static func scenarioFile(binary: String, receiver: Receiver) throws -> String {
        try scenarioFile(binary: binary, port: receiver.port)
    }

    /// A temporary scenario file: the built-in scenario with its team's notifications sent to
    /// 127.0.0.1:`port` (the caller removes it).
    static func scenarioFile(binary: String, port: Int) throws -> String {
        let scenario = NSTemporaryDirectory() + "appleid-mock-bench-\(getpid())-\(port).json"
        guard let printed = Tool.run(binary, ["scenario", "print"]),
              var object = try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any],
              var teams = object["teams"] as? [[String: Any]], !teams.isEmpty else {
            throw ServerProcess.Failure(description: "`appleid-mock scenario print` failed")
        }
        teams[0]["notification_url"] = "http://127.0.0.1:\(port)/apple"
        object["teams"] = teams
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: scenario))
        return scenario
    }

    /// Sends `count` events in blocks of `blockSize`, reporting each full block's cost, and waits
    /// for their notifications: how many were accepted, and the latencies of those that arrived.
    private static func batch(count: Int, blockSize: Int, connection: RawConnection, receiver: Receiver, server: ServerProcess,
                              deadline: Double, block: (BlockCost) -> Void) throws -> (sent: Int, latencies: [Double]) {
        receiver.reset()
        var failures = 0
        var blockStart = (cpu: server.cpuSeconds, wall: Date())
        for index in 0..<count {
            let type = index % 2 == 0 ? "email-disabled" : "email-enabled"
            let body = #"{"type":"\#(type)","user":"bob","client_id":"com.example.app"}"#
            if try connection.exchange(request("/__mock/events", body)).status != 202 { failures += 1 }
            if (index + 1) % blockSize == 0 {
                // A block's cost includes delivering its notifications (signing, posting): wait
                // for them, so no block pays for another's backlog.
                _ = receiver.await(count: index + 1 - failures, seconds: deadline)
                let now = (cpu: server.cpuSeconds, wall: Date())
                block(BlockCost(cpuMicroseconds: (now.cpu - blockStart.cpu) * 1e6 / Double(blockSize),
                                wallMicroseconds: now.wall.timeIntervalSince(blockStart.wall) * 1e6 / Double(blockSize)))
                blockStart = now
            }
        }
        let latencies = receiver.await(count: count - failures, seconds: deadline)
        usleep(200_000)
        return (count - failures, latencies)
    }

    /// A JSON `POST` to `path`.
    static func request(_ path: String, _ body: String) -> [UInt8] {
        Array("POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    /// Accepts connections on 127.0.0.1, reads one request each, answers 200, and notes the
    /// latency of each notification from its `event_time`.
    final class Receiver: @unchecked Sendable {
        let port: Int
        private let fd: Int32
        private let lock = NSLock()
        private var latencies: [Double] = []
        private var stopped = false

        init() throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = withUnsafeMutablePointer(to: &address) { [fd] pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && listen(fd, 512) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard listening else { throw ServerProcess.Failure(description: "receiver cannot listen") }
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread.detachNewThread { [self] in acceptLoop() }
        }

        private func acceptLoop() {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                Thread.detachNewThread { [self] in serve(client) }
            }
        }

        private func serve(_ client: Int32) {
            defer { close(client) }
            var data: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16_384)
            var expected: Int?
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                data += chunk[0..<count]
                if expected == nil, let end = data.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    expected = end.upperBound + length
                }
                if let expected, data.count >= expected { break }
            }
            let received = Date().timeIntervalSince1970 * 1000
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard let eventTime = Self.eventTime(data) else { return }
            lock.withLock { latencies.append(received - eventTime) }
        }

        /// `event_time` from the body's JWT payload.
        private static func eventTime(_ request: [UInt8]) -> Double? {
            guard let start = request.firstRange(of: Array("\r\n\r\n".utf8)),
                  let body = try? JSONSerialization.jsonObject(with: Data(request[start.upperBound...])) as? [String: Any],
                  let jwt = body["payload"] as? String else { return nil }
            let parts = jwt.split(separator: ".")
            guard parts.count == 3 else { return nil }
            var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            guard let payload = Data(base64Encoded: base64), let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
                  let events = claims["events"] as? String,
                  let event = try? JSONSerialization.jsonObject(with: Data(events.utf8)) as? [String: Any],
                  let time = event["event_time"] as? Double else { return nil }
            return time
        }

        /// The latencies once `count` have arrived, or what arrived by the deadline.
        func await(count: Int, seconds: Double) -> [Double] {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if lock.withLock({ latencies.count }) >= count { break }
                usleep(10_000)
            }
            return lock.withLock { latencies }
        }

        /// Forgets what arrived so far.
        func reset() {
            lock.withLock { latencies.removeAll() }
        }

        func stop() {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }
}
