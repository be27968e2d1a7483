import AppleIDMock
import Dispatch
import Glibc
import JOSE
import MiniHTTP
import Synchronization

/// `appleid-mock events [--follow]`: a running mock's event feed (`GET /__mock/events`), one
/// JSON object a line as the mock sends it, oldest first; with `--follow`, each new event as it
/// lands, until a stop signal (exit 0) or the mock goes away (exit 1).
enum EventsCommand {
    /// The command's help.
    static let usage = """
    usage: appleid-mock events [--follow] [--type NAMES] [--after SEQ]
                               [--server URL] [--ca FILE] [--timeout SECONDS] [--control-token TOKEN]

    Prints the mock's record of what happened (GET /__mock/events), oldest first, one JSON object
    a line as the mock sends it: sequence, mock time ("time", "at"), type and the event's fields.

      --follow           then keep printing events as they land (long-polls with wait=\(followWait))
                         until SIGINT or SIGTERM or its output closes (exit 0), or until the
                         mock goes away (exit 1)
      --type NAMES       only these types, comma-separated:
    \(wrapped(DomainEvent.names, indent: 21))
      --after SEQ        only events after sequence number SEQ (default 0: all the mock keeps)
    \(ControlClient.optionsUsage)

    The mock keeps its newest events only; when some after SEQ are gone, a line on stderr says
    how many were missed.
    """

    /// Events one request asks for (the feed's most).
    static let pageLimit = 1000
    /// Seconds each `--follow` request lets the mock hold it until an event lands.
    static let followWait = 30

    /// Runs `events …`.
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let parsed = try ParsedArguments(arguments, options: ControlClient.options.union(["type", "after"]), flags: ["follow"], usage: usage)
        try parsed.requirePositionals(0, usage: usage)
        var filter = ""
        if let types = parsed.options["type"] {
            let names = types.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard names.allSatisfy(DomainEvent.names.contains) else {
                throw UsageError(message: "--type expects event types separated by commas, among \(DomainEvent.names.joined(separator: ", ")); got \"\(types)\"",
                                 usage: usage)
            }
            filter = "&type=" + names.joined(separator: ",")
        }
        let after = try parsed.unsigned("after", usage: usage) ?? 0
        let client = try ControlClient(parsed, environment: environment, usage: usage)
        guard parsed.flags.contains("follow") else {
            try read(client, after: after, filter: filter, follow: false) { line in
                Output.out(line)
                return true
            }
            return 0
        }
        return try follow(client, after: after, filter: filter)
    }

    /// Prints pages of the feed from `after` on through `print` (which answers false once nothing
    /// more may be printed): until a page comes back short, or with `follow` for ever.
    private static func read(_ client: ControlClient, after: UInt64, filter: String, follow: Bool,
                             print: (String) -> Bool) throws {
        var cursor = after
        var wait = 0
        while true {
            let path = "/__mock/events?after=\(cursor)&limit=\(pageLimit)\(wait > 0 ? "&wait=\(wait)" : "")\(filter)"
            let text: String
            do {
                text = try client.call("GET", path, waiting: Double(wait))
            } catch let failure as CommandFailure where wait > 0 {
                throw CommandFailure(message: "lost the mock while following its events: \(failure.message)", status: failure.status)
            }
            guard case .object(let answer)? = try? JSONParser.parse(Array(text.utf8)), case .array(let events)? = answer["events"],
                  case .int(let last)? = answer["last"], last >= 0 else {
                throw CommandFailure(message: "\(client.server) answered something other than the event feed: \(LogText.clip(text))", status: 1)
            }
            if let missed = answer["missed"]?.intValue, missed > 0 {
                Output.err("appleid-mock: \(missed) \(missed == 1 ? "event was" : "events were") missed: the mock no longer keeps "
                           + "\(missed == 1 ? "it" : "them") (it keeps its newest only)")
            }
            // The mock writes each event with sorted keys; so does this, byte for byte the same.
            for event in events {
                guard print(String(decoding: JSONWriter.sortedCompact(event), as: UTF8.self)) else { return }
            }
            cursor = UInt64(last)
            if events.count < pageLimit {
                guard follow else { return }
                wait = followWait
            }
        }
    }

    /// `--follow`: reads on a thread of its own while this one waits for a stop signal, for
    /// stdout to close, or for the reader to fail; a line being printed is finished first, and
    /// none is printed after.
    private static func follow(_ client: ControlClient, after: UInt64, filter: String) throws -> Int32 {
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
        // than at the next event's write.
        LoopThread.start(name: "stdout") {
            var watched = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            while poll(&watched, 1, -1) < 0 && errno == EINTR {}
            if watched.revents != 0 { done.signal() }
        }
        LoopThread.start(name: "events") {
            do {
                try read(client, after: after, filter: filter, follow: true) { line in
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

    /// `names` comma-separated in lines of at most 96 columns, each indented by `indent` spaces.
    private static func wrapped(_ names: [String], indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for (index, name) in names.enumerated() {
            let item = name + (index == names.count - 1 ? "" : ",")
            if !line.isEmpty && indent + line.utf8.count + 1 + item.utf8.count > 96 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + item
        }
        lines.append(line)
        return lines.map { String(repeating: " ", count: indent) + $0 }.joined(separator: "\n")
    }
}
