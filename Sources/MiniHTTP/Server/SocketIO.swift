import CMiniHTTP

/// One read or write on an accepted connection's socket, through TLS when the connection has
/// it: the part HTTP and SMTP connections share. Each call says what it did; what TLS waits for
/// next (epoll's readable or writable, or nothing) is left in `wants`.
enum SocketIO {
    /// What a call did.
    enum Outcome {
        /// This many bytes moved.
        case moved(Int)
        /// Nothing now: call again when epoll says so.
        case wouldBlock
        /// The peer ended the stream (a read of 0, or TLS close_notify).
        case ended
        /// An error: the connection is unusable.
        case failed
    }

    /// Reads into `scratch`.
    @inline(__always)
    static func read(_ fd: Int32, _ tls: TLSServerSession?, into scratch: UnsafeMutableRawBufferPointer, wants: inout UInt32) -> Outcome {
        guard let tls else {
            do {
                let count = try Syscall.read(fd, scratch.baseAddress!, scratch.count)
                return count == 0 ? .ended : .moved(count)
            } catch {
                return error.isWouldBlock ? .wouldBlock : .failed
            }
        }
        switch tls.read(into: scratch) {
        case .done(let count):
            wants = 0
            return count == 0 ? .ended : .moved(count)
        case .wantsRead:
            wants = 0
            return .wouldBlock
        case .wantsWrite:
            wants = MH_EPOLLOUT
            return .wouldBlock
        case .closed:
            return .ended
        case .failed, .plaintextHTTP:
            return .failed
        }
    }

    /// Writes up to `count` bytes from `bytes`.
    @inline(__always)
    static func write(_ fd: Int32, _ tls: TLSServerSession?, _ bytes: UnsafeRawPointer, _ count: Int, wants: inout UInt32) -> Outcome {
        guard let tls else {
            do {
                return .moved(try Syscall.send(fd, bytes, count))
            } catch {
                return error.isWouldBlock ? .wouldBlock : .failed
            }
        }
        switch tls.write(bytes, count: count) {
        case .done(let sent):
            wants = 0
            return .moved(sent)
        case .wantsWrite:
            wants = 0
            return .wouldBlock
        case .wantsRead:
            wants = MH_EPOLLIN
            return .wouldBlock
        case .closed, .failed, .plaintextHTTP:
            return .failed
        }
    }
}
