import COpenSSL
import Glibc

/// One server-side TLS session over an accepted non-blocking socket, driven by its event loop:
/// every call returns at once, saying what the socket must become ready for when OpenSSL cannot
/// go on. Confined to the connection's loop thread.
final class TLSServerSession {
    /// What a call did.
    enum Outcome: Equatable {
        /// Done (the handshake), or this many bytes moved.
        case done(Int)
        /// Call again once the socket is readable.
        case wantsRead
        /// Call again once the socket is writable.
        case wantsWrite
        /// The peer closed the TLS stream (close_notify, or the socket ended).
        case closed
        /// A protocol or socket error: the connection is unusable.
        case failed
    }

    private let ssl: OpaquePointer
    private(set) var handshakeDone = false

    /// A session on `fd`; nil when OpenSSL cannot make one.
    init?(context: TLSServerContext, fd: Int32) {
        guard let ssl = SSL_new(context.context) else {
            ERR_clear_error()
            return nil
        }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            ERR_clear_error()
            return nil
        }
        SSL_set_accept_state(ssl)
        self.ssl = ssl
    }

    deinit {
        SSL_free(ssl)
    }

    /// Advances the handshake.
    func handshake() -> Outcome {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeDone = true
            return .done(0)
        }
        return outcome(of: result)
    }

    /// Reads decrypted bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        ERR_clear_error()
        let result = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        return result > 0 ? .done(Int(result)) : outcome(of: result)
    }

    /// Encrypts and writes up to `count` bytes from `bytes`.
    func write(_ bytes: UnsafeRawPointer, count: Int) -> Outcome {
        ERR_clear_error()
        let result = SSL_write(ssl, bytes, Int32(min(count, 1 << 20)))
        return result > 0 ? .done(Int(result)) : outcome(of: result)
    }

    /// Sends close_notify if the socket takes it now; never waits.
    func shutdown() {
        ERR_clear_error()
        if handshakeDone { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
    }

    private func outcome(of result: Int32) -> Outcome {
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ: return .wantsRead
        case SSL_ERROR_WANT_WRITE: return .wantsWrite
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        case SSL_ERROR_SYSCALL where ERR_peek_error() == 0 && result == 0:
            return .closed
        default:
            ERR_clear_error()
            return .failed
        }
    }
}
