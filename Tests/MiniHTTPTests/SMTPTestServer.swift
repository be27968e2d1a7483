import Foundation
import Glibc
@testable import MiniHTTP
import Synchronization

/// An SMTP server on 127.0.0.1 port 0 for client tests: one thread, one connection at a time,
/// blocking I/O with `poll`. Either a real `SMTPSession` (so a test proves client and session
/// agree) or fixed bytes sent after accepting.
final class SMTPTestServer: Sendable {
    /// What the server does with a connection.
    enum Behaviour: Sendable {
        /// Runs an `SMTPSession`; with `refuseEHLO`, a read starting with `EHLO` is answered 502
        /// without reaching the session (a server that knows only HELO).
        case session(SMTPTestHandler, SMTPLimits, refuseEHLO: Bool)
        /// Sends these bytes, then reads until the client closes, answering QUIT with 221.
        case raw([UInt8])
    }

    /// The bound port.
    let port: Int
    private let listener: ListeningSocket
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Every byte clients sent, per connection, in order.
    private let received = Mutex<[[UInt8]]>([])

    /// Starts serving at once.
    init(_ behaviour: Behaviour) throws {
        listener = try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 8)
        port = listener.port
        let thread = Thread { [self] in
            serve(behaviour)
            finished.signal()
        }
        thread.start()
    }

    /// What each connection's client sent.
    var connections: [[UInt8]] { received.withLock { $0 } }

    /// Stops accepting, waits for the thread, and closes the listener.
    func stop() {
        stopped.store(true, ordering: .releasing)
        _ = finished.wait(timeout: .now() + 10)
        listener.close()
    }

    private func serve(_ behaviour: Behaviour) {
        while !stopped.load(ordering: .acquiring) {
            guard Self.wait(listener.fd, events: POLLIN, milliseconds: 50),
                  let fd = try? Syscall.accept(listener.fd) else { continue }
            received.withLock { $0.append([]) }
            switch behaviour {
            case .session(let handler, let limits, let refuseEHLO): converse(fd, handler, limits, refuseEHLO)
            case .raw(let bytes):
                Self.write(fd, bytes)
                var sent: [UInt8] = []
                while let more = read(fd) {
                    sent += more
                    if sent.suffix(6) == Array("QUIT\r\n".utf8) { Self.write(fd, Array("221 2.0.0 Bye\r\n".utf8)) }
                }
            }
            Syscall.close(fd)
        }
    }

    private func converse(_ fd: Int32, _ handler: SMTPTestHandler, _ limits: SMTPLimits, _ refuseEHLO: Bool) {
        var session = SMTPSession(hostname: "mx.test", limits: limits, tlsAvailable: false, handler: handler)
        Self.write(fd, session.greeting)
        while let bytes = read(fd) {
            if refuseEHLO && bytes.starts(with: Array("EHLO".utf8)) {
                Self.write(fd, Array("502 5.5.2 Error: command not recognized\r\n".utf8))
                continue
            }
            let output = bytes.withUnsafeBytes { session.receive($0) }
            Self.write(fd, output.bytes)
            if output.action != .none { return }
        }
    }

    /// The next bytes from `fd`, nil at its end (or after 10 s of silence, or on stop).
    private func read(_ fd: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<200 {
            guard !stopped.load(ordering: .acquiring) else { return nil }
            guard Self.wait(fd, events: POLLIN, milliseconds: 50) else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            let bytes = Array(buffer[0..<count])
            received.withLock { $0[$0.count - 1] += bytes }
            return bytes
        }
        return nil
    }

    private static func wait(_ fd: Int32, events: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
        return Glibc.poll(&entry, 1, milliseconds) > 0
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                sent += count
            } else if count < 0 && (errno == EAGAIN || errno == EINTR) {
                _ = wait(fd, events: POLLOUT, milliseconds: 50)
            } else {
                return
            }
        }
    }
}
