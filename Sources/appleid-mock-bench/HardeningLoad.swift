import Foundation
import Glibc
import Synchronization

/// The hardening rows: what a background job, a slow client or a
/// silent receiver used to do to the mock, each driven as a robustness review drove it.
/// - Compaction: `codes` native sign-ins whose codes are never exchanged, with `--state`, four
///   clients; `/__mock/health` probed every 20 ms throughout; the longest sign-in answer per
///   third; then SIGTERM, timed to the exit.
/// - SMTP trickle: eight sessions holding 64 MiB in DATA, then a byte every 2 s each, while
///   `POST /auth/token` is asked what it was asked idle.
/// - Journal reads: the journal filled with 60 KB form posts; the peak memory one count adds;
///   `/auth/token` code exchanges idle and beside twenty long polls whose filter never matches.
/// - Silent receiver: `events` account events whose notifications go to a receiver that
///   accepts and never answers; memory from the start to the end, `--journal off`.
struct HardeningLoad {
    struct Compaction {
        var codes: Int
        var healthP50: Double
        var healthP99: Double
        var healthMax: Double
        /// The longest sign-in answer in each third of the run, and the sign-ins by then.
        var thirds: [(upTo: Int, longest: Double, p99: Double)]
        var exitSeconds: Double
        /// `state import` of archives holding this many unredeemed codes (and 10,000 newer
        /// events), timed: the import compacts what it made before it closes.
        var imports: [(codes: Int, seconds: Double)]
        var failures: Int
    }

    struct Trickle {
        var sessions: Int
        var heldBytes: Int
        var idleP50: Double
        var idleP99: Double
        var trickleP50: Double
        var trickleP99: Double
        /// Answers to `/auth/token` during the trickle by status.
        var statuses: [Int: Int]
        /// Sessions the mock let go (421) during the trickle.
        var sessionsCut: Int
    }

    struct JournalReads {
        var entries: Int
        var peakBefore: Double
        var peakAfterCount: Double
        var countMilliseconds: Double
        var polls: Int
        var idleP50: Double
        var idleP99: Double
        var pollsP50: Double
        var pollsP99: Double
        var failures: Int

        var added: Double { peakAfterCount - peakBefore }
        var ratioP50: Double { idleP50 > 0 ? pollsP50 / idleP50 : 0 }
    }

    struct SilentReceiver {
        var events: Int
        var residentStart: Double
        var residentLogFull: Double
        var residentEnd: Double
        var failures: Int

        /// From the log full (its 10,000 records and the feed's 10,000 events held) to the end.
        var growthAfterLogFull: Double { residentEnd - residentLogFull }
    }

    var compaction: Compaction
    var trickle: Trickle
    var journal: JournalReads
    var silent: SilentReceiver

    var failures: Int { compaction.failures + journal.failures + silent.failures + (trickle.statuses[503] ?? 0) }

    static func run(binary: String, secret: String, options: BenchOptions, progress: (String) -> Void) throws -> HardeningLoad {
        let codes = options.smoke ? 12_000 : 60_000
        progress("--state compaction: \(codes) sign-ins never exchanged, health probed every 20 ms, then SIGTERM")
        var compaction = try compaction(binary: binary, codes: codes)
        let sizes = options.smoke ? [5_000, 10_000] : [10_000, 20_000, 40_000]
        progress("--state compaction cost: state import of archives with \(sizes.map(String.init).joined(separator: ", ")) unredeemed codes")
        compaction.imports = try imports(binary: binary, sizes: sizes)
        progress("SMTP: 8 sessions hold 64 MiB in DATA and trickle a byte every 2 s; POST /auth/token meanwhile")
        let trickle = try trickle(binary: binary, secret: secret, seconds: options.smoke ? 12 : 30)
        progress("journal: filled with 60 KB form posts; one count; exchanges beside 20 never-matching long polls")
        let journal = try journalReads(binary: binary, secret: secret, posts: options.smoke ? 2000 : 10_000, exchanges: options.smoke ? 100 : 400)
        let events = options.smoke ? 12_000 : 80_000
        progress("notifications: \(events) events to a receiver that never answers, --journal off")
        let silent = try silentReceiver(binary: binary, events: events)
        return HardeningLoad(compaction: compaction, trickle: trickle, journal: journal, silent: silent)
    }

    // MARK: - P2

    private static func compaction(binary: String, codes: Int) throws -> Compaction {
        let path = NSTemporaryDirectory() + "appleid-mock-bench-\(getpid())-compaction.sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let server = try ServerProcess.startMock(binary: binary, arguments: ["--state", path])
        defer { server.stop() }
        let stop = Atomic<Bool>(false)
        let health = Mutex<[Double]>([])
        let prober = DispatchGroup()
        prober.enter()
        let port = server.port
        Thread.detachNewThread {
            defer { prober.leave() }
            guard let connection = try? RawConnection(port: port, timeoutSeconds: 600) else { return }
            let request = Array("GET /__mock/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            while !stop.load(ordering: .relaxed) {
                let start = Stopwatch.now()
                guard (try? connection.exchange(request)) != nil else { return }
                let elapsed = Stopwatch.milliseconds(since: start)
                health.withLock { $0.append(elapsed) }
                usleep(20_000)
            }
        }
        let signIn = NotificationLoad.request("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app"}"#)
        let clients = try (0..<4).map { _ in try RawConnection(port: server.port, timeoutSeconds: 600) }
        var thirds: [(upTo: Int, longest: Double, p99: Double)] = []
        var failures = 0
        for third in 1...3 {
            let latencies = ExchangeLoad.Collected(clients.count)
            let share = codes / 3 / clients.count
            failures += LoadDriver.run(clients, threads: 2) { index in
                LoadDriver.Script(requests: Array(repeating: signIn, count: share)) { _, status, _, milliseconds in
                    latencies.latencies[index].append(milliseconds)
                    return status == 200
                }
            }
            let all = latencies.latencies.flatMap { $0 }
            thirds.append((share * clients.count * third, all.max() ?? 0, Percentiles(all).value(0.99)))
        }
        stop.store(true, ordering: .relaxed)
        prober.wait()
        let start = Stopwatch.now()
        server.stop()
        let exit = Stopwatch.milliseconds(since: start) / 1000
        let probes = health.withLock { Percentiles($0) }
        return Compaction(codes: codes, healthP50: probes.median, healthP99: probes.value(0.99), healthMax: probes.value(1),
                          thirds: thirds, exitSeconds: exit, imports: [], failures: failures)
    }

    /// Times `state import` of an archive of alice's consent, `codes` codes issued under it and
    /// never redeemed, a codes-expired that covers them, and 10,000 newer inert events, for each
    /// size: what compacting that many codes costs (the import compacts before it closes).
    private static func imports(binary: String, sizes: [Int]) throws -> [(codes: Int, seconds: Double)] {
        let base = NSTemporaryDirectory() + "appleid-mock-bench-\(getpid())-import"
        defer { for suffix in ["", ".json", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        let server = try ServerProcess.startMock(binary: binary, arguments: ["--state", base])
        let signIn = NotificationLoad.request("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app"}"#)
        guard try RawConnection(port: server.port).exchange(signIn).status == 200 else {
            throw ServerProcess.Failure(description: "the sign-in for the import archive failed")
        }
        server.stop()
        guard let exported = Tool.run(binary, ["state", "export", "--state", base]),
              var archive = try JSONSerialization.jsonObject(with: Data(exported.utf8)) as? [String: Any],
              let events = archive["events"] as? [[String: Any]], events.count == 2, var issued = events.last,
              var event = issued["event"] as? [String: Any], var grant = event["grant"] as? [String: Any],
              let expires = grant["expires_at"] as? Int, let at = issued["at"] as? Double else {
            throw ServerProcess.Failure(description: "unexpected export for the import archive")
        }
        var results: [(codes: Int, seconds: Double)] = []
        for size in sizes {
            var list = [events[0]]
            var sequence = 1
            for index in 0..<size {
                sequence += 1
                event["code"] = "c-bench-\(index)"
                grant["expires_at"] = expires + index % 600
                event["grant"] = grant
                issued["event"] = event
                issued["sequence"] = sequence
                list.append(issued)
            }
            sequence += 1
            list.append(["sequence": sequence, "at": at, "event": ["type": "codes-expired", "at": expires + 600, "count": size]])
            for _ in 0..<10_000 {
                sequence += 1
                list.append(["sequence": sequence, "at": at, "event": ["type": "tokens-issued", "grant_type": "refresh_token",
                                                                       "client_id": "com.example.app", "user_id": "alice", "consent_id": grant["consent_id"] ?? 1]])
            }
            archive["events"] = list
            try JSONSerialization.data(withJSONObject: archive).write(to: URL(fileURLWithPath: base + ".json"))
            let target = base + "-\(size)"
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) } }
            let start = Stopwatch.now()
            guard Tool.run(binary, ["state", "import", base + ".json", "--state", target]) != nil else {
                throw ServerProcess.Failure(description: "state import of \(size) codes failed")
            }
            results.append((size, Stopwatch.milliseconds(since: start) / 1000))
        }
        return results
    }

    // MARK: - P3

    private static func trickle(binary: String, secret: String, seconds: Int) throws -> Trickle {
        let server = try ServerProcess.startMock(binary: binary, arguments: ["--smtp-port", "0"])
        defer { server.stop() }
        guard let smtpPort = server.smtpPort else { throw ServerProcess.Failure(description: "no smtp line from \(binary)") }
        let token = ExchangeLoad.tokenRequest(code: "c0000000000000000000000000000000.0.abcd.AAAAAAAAAAAAAAAAAAAAAA", secret: secret)
        var client = try RawConnection(port: server.port)
        func ask(_ count: Int, statuses: inout [Int: Int]) throws -> [Double] {
            var latencies: [Double] = []
            for _ in 0..<count {
                let start = Stopwatch.now()
                // A 503 for the body budget closes the connection: the next request opens another.
                guard let answer = try? client.exchange(token) else {
                    client = try RawConnection(port: server.port)
                    continue
                }
                latencies.append(Stopwatch.milliseconds(since: start))
                statuses[answer.status, default: 0] += 1
                if answer.status == 503 { client = try RawConnection(port: server.port) }
                usleep(5_000)
            }
            return latencies
        }
        var idleStatuses: [Int: Int] = [:]
        let idle = Percentiles(try ask(300, statuses: &idleStatuses))
        // Eight sessions holding 200 bytes short of 64 MiB between them (the probe's attack: a
        // 361-byte form no longer fit the body budget they shared), each then sending a byte every 2 s.
        let line = Array((String(repeating: "a", count: 998) + "\r\n").utf8)
        let held = 64 * 1024 * 1024 - 200
        var sessions: [Int32] = []
        var sent = 0
        for index in 0..<8 {
            let fd = try RawConnection.connectedSocket(port: smtpPort, timeoutSeconds: 5)
            let envelope = Array("EHLO bench.example\r\nMAIL FROM:<x@example.com>\r\nRCPT TO:<r\(index)@direct.example>\r\nDATA\r\n".utf8)
            _ = envelope.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let share = index == 7 ? held - sent : held / 8
            var mine = 0
            while mine < share {
                let piece = min(line.count, share - mine)
                guard line.withUnsafeBytes({ send(fd, $0.baseAddress, piece, Int32(MSG_NOSIGNAL)) }) == piece else { break }
                mine += piece
            }
            sent += mine
            sessions.append(fd)
        }
        usleep(500_000)
        let stop = Atomic<Bool>(false)
        let cut = Atomic<Int>(0)
        let trickling = DispatchGroup()
        for fd in sessions {
            trickling.enter()
            Thread.detachNewThread {
                defer { trickling.leave(); close(fd) }
                var byte = UInt8(ascii: "c")
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !stop.load(ordering: .relaxed) {
                    if send(fd, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 { break }
                    // Read what the mock said (nonblocking): a 421 means it let this session go.
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    if count > 0, String(decoding: buffer[0..<count], as: UTF8.self).contains("421 ") {
                        cut.add(1, ordering: .relaxed)
                        break
                    }
                    for _ in 0..<20 where !stop.load(ordering: .relaxed) { usleep(100_000) }
                }
            }
        }
        var statuses: [Int: Int] = [:]
        var latencies: [Double] = []
        let deadline = Stopwatch.now() + UInt64(seconds) * 1_000_000_000
        while Stopwatch.now() < deadline { latencies += try ask(50, statuses: &statuses) }
        stop.store(true, ordering: .relaxed)
        trickling.wait()
        let during = Percentiles(latencies)
        return Trickle(sessions: 8, heldBytes: sent, idleP50: idle.median, idleP99: idle.value(0.99), trickleP50: during.median,
                       trickleP99: during.value(0.99), statuses: statuses, sessionsCut: cut.load(ordering: .relaxed))
    }

    // MARK: - P4

    private static func journalReads(binary: String, secret: String, posts: Int, exchanges: Int) throws -> JournalReads {
        let server = try ServerProcess.startMock(binary: binary)
        defer { server.stop() }
        // 60 KB forms, as anyone who reaches Apple's routes can post.
        let form = (0..<7000).map { "a\($0)=b" }.joined(separator: "&")
        let heavy = Array("POST /auth/token HTTP/1.1\r\nHost: bench\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(form.utf8.count)\r\n\r\n\(form)".utf8)
        let clients = try (0..<8).map { _ in try RawConnection(port: server.port) }
        var failures = LoadDriver.run(clients, threads: 2) { index in
            LoadDriver.Script(requests: Array(repeating: heavy, count: posts / 8)) { _, status, _, _ in status == 400 }
        }
        usleep(300_000)
        let control = try RawConnection(port: server.port, timeoutSeconds: 120)
        let peakBefore = server.peakResidentMiB
        let start = Stopwatch.now()
        let counted = try control.exchange(Array("GET /__mock/requests/count HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let countMilliseconds = Stopwatch.milliseconds(since: start)
        if counted.status != 200 { failures += 1 }
        let peakAfter = server.peakResidentMiB
        // /auth/token idle, then beside twenty long polls that never match.
        let exchanger = try RawConnection(port: server.port)
        func exchangeLatencies() throws -> [Double] {
            var latencies: [Double] = []
            for _ in 0..<exchanges {
                let authorized = try exchanger.exchange(ExchangeLoad.authorizeRequest)
                guard authorized.status == 200, let code = ExchangeLoad.code(in: authorized.body) else {
                    failures += 1
                    continue
                }
                let start = Stopwatch.now()
                if try exchanger.exchange(ExchangeLoad.tokenRequest(code: code, secret: secret)).status != 200 { failures += 1 }
                latencies.append(Stopwatch.milliseconds(since: start))
            }
            return latencies
        }
        let idle = Percentiles(try exchangeLatencies())
        let polls = 20
        let newest = try control.exchange(Array("GET /__mock/requests?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        let after = (try? JSONSerialization.jsonObject(with: Data(newest.body)) as? [String: Any])?["newest"] as? Int ?? 0
        let pollers = try (0..<polls).map { _ in try RawConnection(port: server.port, timeoutSeconds: 120) }
        for poller in pollers {
            try poller.start(Array("GET /__mock/requests?after=\(after)&path=/nomatch&wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        }
        usleep(500_000)
        let beside = Percentiles(try exchangeLatencies())
        return JournalReads(entries: posts, peakBefore: peakBefore, peakAfterCount: peakAfter, countMilliseconds: countMilliseconds, polls: polls,
                            idleP50: idle.median, idleP99: idle.value(0.99), pollsP50: beside.median, pollsP99: beside.value(0.99), failures: failures)
    }

    // MARK: - P5

    private static func silentReceiver(binary: String, events: Int) throws -> SilentReceiver {
        let receiver = try SilentListener()
        defer { receiver.stop() }
        let scenario = try NotificationLoad.scenarioFile(binary: binary, port: receiver.port)
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        let server = try ServerProcess.startMock(binary: binary, arguments: ["--scenario", scenario, "--journal", "off"])
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let signIn = #"{"user":"bob","client_id":"com.example.app","scopes":["email"],"hide_email":true}"#
        guard try connection.exchange(NotificationLoad.request("/__mock/sign-in", signIn)).status == 200 else {
            throw ServerProcess.Failure(description: "native sign-in for the silent receiver failed")
        }
        usleep(300_000)
        let start = server.residentMiB
        var logFull = 0.0
        var failures = 0
        for index in 0..<events {
            let type = index % 2 == 0 ? "email-disabled" : "email-enabled"
            if try connection.exchange(NotificationLoad.request("/__mock/events", #"{"type":"\#(type)","user":"bob","client_id":"com.example.app"}"#)).status != 202 {
                failures += 1
            }
            if index + 1 == min(events, 10_000) { logFull = server.residentMiB }
        }
        usleep(300_000)
        return SilentReceiver(events: events, residentStart: start, residentLogFull: logFull, residentEnd: server.residentMiB, failures: failures)
    }

    /// Accepts connections on 127.0.0.1 and never answers them (holding each until it stops).
    final class SilentListener: @unchecked Sendable {
        let port: Int
        private let fd: Int32
        private let held = Mutex<[Int32]>([])

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
            guard listening else { throw ServerProcess.Failure(description: "the silent receiver cannot listen") }
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread.detachNewThread { [self] in
                while true {
                    let client = accept(fd, nil, nil)
                    guard client >= 0 else { return }
                    held.withLock { $0.append(client) }
                }
            }
        }

        func stop() {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
            for client in held.withLock({ $0 }) { close(client) }
        }
    }
}
