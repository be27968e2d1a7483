import Foundation
import Glibc
import Synchronization

/// Drives keep-alive connections the way wrk does: a few threads, each multiplexing its share
/// of the connections with poll(2), one request in flight per connection. Far cheaper than a
/// thread per connection, and the client's CPU comes out of the server's two cores.
enum LoadDriver {
    /// What a connection does next: the request to send, and what to do with its answer
    /// (return false to count a failure).
    struct Script: @unchecked Sendable {
        var requests: [[UInt8]]
        var onAnswer: (_ index: Int, _ status: Int, _ body: ArraySlice<UInt8>, _ milliseconds: Double) -> Bool
    }

    /// Runs every connection's script to the end over `threads` threads; returns failures.
    static func run(_ connections: [RawConnection], threads: Int, script: @escaping @Sendable (Int) -> Script) -> Int {
        let failures = Atomic<Int>(0)
        let groups = (0..<threads).map { thread in Array(stride(from: thread, to: connections.count, by: threads)) }
        parallel(groups.count) { group in
            let mine = groups[group]
            let scripts = mine.map { script($0) }
            var next = [Int](repeating: 0, count: mine.count)
            var started = [UInt64](repeating: 0, count: mine.count)
            var live: [Int] = []
            for slot in mine.indices where !scripts[slot].requests.isEmpty {
                do {
                    started[slot] = Stopwatch.now()
                    try connections[mine[slot]].start(scripts[slot].requests[0])
                    live.append(slot)
                } catch {
                    failures.add(scripts[slot].requests.count, ordering: .relaxed)
                }
            }
            var descriptors = [pollfd]()
            while !live.isEmpty {
                descriptors = live.map { pollfd(fd: connections[mine[$0]].descriptor, events: Int16(POLLIN), revents: 0) }
                guard Glibc.poll(&descriptors, nfds_t(descriptors.count), 30_000) > 0 else {
                    failures.add(live.reduce(0) { $0 + scripts[$1].requests.count - next[$1] }, ordering: .relaxed)
                    return
                }
                var stillLive: [Int] = []
                for (position, slot) in live.enumerated() {
                    guard descriptors[position].revents != 0 else {
                        stillLive.append(slot)
                        continue
                    }
                    let connection = connections[mine[slot]]
                    do {
                        guard let answer = try connection.poll() else {
                            stillLive.append(slot)
                            continue
                        }
                        if !scripts[slot].onAnswer(next[slot], answer.status, answer.body, Stopwatch.milliseconds(since: started[slot])) {
                            failures.add(1, ordering: .relaxed)
                        }
                        next[slot] += 1
                        if next[slot] < scripts[slot].requests.count {
                            started[slot] = Stopwatch.now()
                            try connection.start(scripts[slot].requests[next[slot]])
                            stillLive.append(slot)
                        }
                    } catch {
                        failures.add(scripts[slot].requests.count - next[slot], ordering: .relaxed)
                    }
                }
                live = stillLive
            }
        }
        return failures.load(ordering: .relaxed)
    }

    /// Runs `body(0..<count)` on `count` threads at once and waits for all.
    private static func parallel(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                body(index)
                group.leave()
            }
        }
        group.wait()
    }
}
