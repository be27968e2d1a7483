import Foundation
import Glibc
import Synchronization

/// The relay's SMTP port: messages accepted per second, `messages` of `size` bytes to
/// a relay address from a registered sender over `connections` connections (each a persistent
/// SMTP session, one message after another); resident memory with the mailbox full against
/// after as many more; and `/auth/keys` with the SMTP port open against without, in pairs.
struct MailLoad {
    var messagesPerSecond: Double
    var messages: Int
    var size: Int
    var connections: Int
    var residentFull: Double
    var residentAfter: Double
    var keysOn: Double
    var keysOff: Double
    var keysPairRatio: Double
    var failures: Int

    var memoryGrowth: Double { residentFull > 0 ? (residentAfter - residentFull) / residentFull * 100 : 0 }

    static func run(binary: String, options: BenchOptions, cores: Int, progress: (String) -> Void) throws -> MailLoad {
        let messages = options.smoke ? 200 : 1000
        let size = 10 * 1024
        let connections = 10
        let server = try ServerProcess.startMock(binary: binary, arguments: ["--smtp-port", "0"])
        defer { server.stop() }
        guard let smtpPort = server.smtpPort else { throw ServerProcess.Failure(description: "no smtp line from \(binary)") }
        let users = try RawConnection(port: server.port).exchange(Array("GET /__mock/users HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        guard let object = try JSONSerialization.jsonObject(with: Data(users.body)) as? [String: Any],
              let list = object["users"] as? [[String: Any]],
              let bob = list.first(where: { $0["id"] as? String == "bob" }), let teams = bob["teams"] as? [[String: Any]],
              let relay = teams.first?["relay_email"] as? String else {
            throw ServerProcess.Failure(description: "no relay address for bob in /__mock/users")
        }
        let body = message(to: relay, size: size)
        // The mailbox keeps the newest 1,000: fill it, then measure memory across as many more.
        progress("SMTP: \(messages) messages of \(size / 1024) KB to fill the mailbox, then \(messages) timed, \(connections) connections")
        var failures = send(port: smtpPort, to: relay, body: body, total: messages, connections: connections).failures
        let full = server.residentMiB
        let timed = send(port: smtpPort, to: relay, body: body, total: messages, connections: connections)
        failures += timed.failures
        let after = server.residentMiB

        let pairs = options.smoke ? 1 : 3
        progress("/auth/keys with the SMTP port open against without, \(pairs) pairs of \(options.duration) s")
        var ratios: [Double] = []
        var on: [Double] = []
        var off: [Double] = []
        for pair in 0..<pairs {
            var rates: [Bool: Double] = [:]
            for smtp in pair % 2 == 0 ? [false, true] : [true, false] {
                let mock = try ServerProcess.startMock(binary: binary, arguments: smtp ? ["--smtp-port", "0"] : [])
                defer { mock.stop() }
                let url = "http://127.0.0.1:\(mock.port)/auth/keys"
                _ = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: 1)
                let run = WrkRun.run(url: url, connections: options.connections, threads: cores, seconds: options.duration)
                rates[smtp] = run?.requestsPerSecond ?? 0
                failures += run?.errors ?? 0
            }
            on.append(rates[true] ?? 0)
            off.append(rates[false] ?? 0)
            if let base = rates[false], base > 0 { ratios.append((rates[true] ?? 0) / base) }
        }
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(max(values.count, 1)) }
        return MailLoad(messagesPerSecond: timed.perSecond, messages: messages, size: size, connections: connections, residentFull: full,
                        residentAfter: after, keysOn: mean(on), keysOff: mean(off), keysPairRatio: Percentiles(ratios).median, failures: failures)
    }

    /// A message of about `size` bytes: headers, then lines of text.
    static func message(to relay: String, size: Int) -> [UInt8] {
        var text = "From: noreply@example.com\r\nTo: \(relay)\r\nSubject: Your receipt\r\n\r\n"
        let line = String(repeating: "0123456789", count: 7) + "\r\n"
        while text.utf8.count + line.utf8.count <= size { text += line }
        return Array(text.utf8)
    }

    /// Sends `total` messages over `connections` sessions at once; the rate is over the wall time.
    static func send(port: Int, to relay: String, body: [UInt8], total: Int, connections: Int) -> (perSecond: Double, failures: Int) {
        let failures = Mutex(0)
        let group = DispatchGroup()
        let start = Stopwatch.now()
        for index in 0..<connections {
            let share = total / connections + (index < total % connections ? 1 : 0)
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let failed = session(port: port, relay: relay, body: body, count: share)
                failures.withLock { $0 += failed }
            }
        }
        group.wait()
        let seconds = Stopwatch.milliseconds(since: start) / 1000
        return (seconds > 0 ? Double(total) / seconds : 0, failures.withLock { $0 })
    }

    /// One SMTP session sending `count` messages; returns how many were not accepted.
    private static func session(port: Int, relay: String, body: [UInt8], count: Int) -> Int {
        guard let connection = try? SMTPLine(port: port), connection.reply() == 220, connection.command("EHLO bench.example") == 250 else { return count }
        var failed = 0
        for _ in 0..<count {
            guard connection.command("MAIL FROM:<noreply@example.com>") == 250, connection.command("RCPT TO:<\(relay)>") == 250,
                  connection.command("DATA") == 354 else {
                failed += 1
                continue
            }
            connection.write(body + Array("\r\n.\r\n".utf8))
            if connection.reply() != 250 { failed += 1 }
        }
        _ = connection.command("QUIT")
        return failed
    }
}

/// A blocking SMTP client connection for the load: writes commands, reads reply codes.
final class SMTPLine {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        fd = try RawConnection.connectedSocket(port: port)
    }

    deinit { close(fd) }

    func command(_ line: String) -> Int {
        write(Array((line + "\r\n").utf8))
        return reply()
    }

    func write(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// The code of the next whole reply (its last line: `CODE ` then text); 0 on failure.
    func reply() -> Int {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            while let end = buffer.firstIndex(of: 10) {
                let line = Array(buffer[..<end])
                buffer.removeFirst(end + 1)
                guard line.count >= 4 else { return 0 }
                if line[3] == UInt8(ascii: " ") { return Int(String(decoding: line[0..<3], as: UTF8.self)) ?? 0 }
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return 0 }
            buffer += chunk[0..<count]
        }
    }
}
