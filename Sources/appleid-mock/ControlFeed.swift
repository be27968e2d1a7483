import AppleIDMock
import Dispatch
import Glibc
import JOSE
import MiniHTTP
import Synchronization

/// A long-polled list of the control API (`/__mock/events`, `/__mock/requests`) printed as JSON
/// lines: page by page from a cursor, and with `follow` each new item as it lands, until a stop
/// signal (exit 0), stdout closing (exit 0), or the mock going away (exit 1).
struct ControlFeed {
    /// Items one request asks for (the feeds' most).
    static let pageLimit = 1000
    /// Seconds each follow request lets the mock hold it until an item lands.
    static let followWait = 30

    let client: ControlClient
    /// The route, e.g. `/__mock/events`.
    let path: String
    /// Filters appended to every request, each `&name=value`, already encoded.
    let filter: String
    /// The answer's list: `events`, `requests`.
    let items: String
    /// What an item is called on stderr, singular and plural (`event`, `events`).
    let noun: (one: String, many: String)

    /// Prints pages from `after` on through `print` (false once nothing more may be printed):
    /// until a page comes back short, or with `follow` for ever.
    func read(after: UInt64, follow: Bool, print: (String) -> Bool) throws {
        var cursor = after
        var wait = 0
        while true {
            let target = "\(path)?after=\(cursor)&limit=\(Self.pageLimit)\(wait > 0 ? "&wait=\(wait)" : "")\(filter)"
            let text: String
            do {
                text = try client.call("GET", target, waiting: Double(wait))
            } catch let failure as CommandFailure where wait > 0 {
                throw CommandFailure(message: "lost the mock while following its \(noun.many): \(failure.message)", status: failure.status)
            }
            guard case .object(let answer)? = try? JSONParser.parse(Array(text.utf8)), case .array(let list)? = answer[items],
                  case .int(let last)? = answer["last"], last >= 0 else {
                throw CommandFailure(message: "\(client.server) answered something other than its \(noun.many): \(LogText.clip(text))", status: 1)
            }
            if let missed = answer["missed"]?.intValue, missed > 0 {
                Output.err("appleid-mock: \(missed) \(missed == 1 ? "\(noun.one) was" : "\(noun.many) were") missed: the mock no longer keeps "
                           + "\(missed == 1 ? "it" : "them") (it keeps its newest only)")
            }
            // The mock writes each item with sorted keys; so does this, byte for byte the same.
            for item in list {
                guard print(String(decoding: JSONWriter.sortedCompact(item), as: UTF8.self)) else { return }
            }
            cursor = UInt64(last)
            if list.count < Self.pageLimit {
                guard follow else { return }
                wait = Self.followWait
            }
        }
    }

    /// Prints what there is from `after` on and exits 0; with `follow`, goes on as described above.
    func run(after: UInt64, follow: Bool) throws -> Int32 {
        guard follow else {
            try read(after: after, follow: false) { line in Output.out(line) }
            return 0
        }
        return try self.follow(after: after)
    }

    /// Reads on a thread of its own while this one waits for a stop signal, for stdout to close,
    /// or for the reader to fail; a line being printed is finished first, and none is printed after.
    private func follow(after: UInt64) throws -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for stop in [SIGINT, SIGTERM] { sigaddset(&stopSignals, stop) }
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        let done = DispatchSemaphore(value: 0)
        let printing = Mutex(true)
        let failure = Mutex<CommandFailure?>(nil)
        LoopThread.start(name: "signals") { [stopSignals] in
            var signals = stopSignals
            var received: Int32 = 0
            sigwait(&signals, &received)
            done.signal()
        }
        // Whoever reads stdout may stop first (`events --follow | head -n 1`): poll reports
        // POLLERR on a pipe whose reader is gone, POLLHUP on a terminal hung up, at once rather
        // than at the next item's write.
        LoopThread.start(name: "stdout") {
            var watched = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            while poll(&watched, 1, -1) < 0 && errno == EINTR {}
            if watched.revents != 0 { done.signal() }
        }
        LoopThread.start(name: "feed") { [self] in
            do {
                try read(after: after, follow: true) { line in
                    printing.withLock { open in
                        if open { open = Output.out(line) }
                        return open
                    }
                }
            } catch {
                let reason = (error as? CommandFailure) ?? CommandFailure(message: "\(error)", status: 1)
                failure.withLock { $0 = reason }
            }
            done.signal()
        }
        done.wait()
        printing.withLock { $0 = false }
        if let reason = failure.withLock({ $0 }) { throw reason }
        return 0
    }
}
