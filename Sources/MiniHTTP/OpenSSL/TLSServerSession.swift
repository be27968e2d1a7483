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
        /// The client opened with a plaintext HTTP request line instead of a TLS handshake;
        /// nothing was read from the socket.
        case plaintextHTTP
    }

    private let ssl: OpaquePointer
    private let fd: Int32
    private(set) var handshakeDone = false
    /// Whether the client's first bytes were looked at (they were a TLS record, or nothing yet).
    private var openingChecked = false

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
        self.fd = fd
    }

    deinit {
        SSL_free(ssl)
    }

    /// Advances the handshake. Before the first step it peeks at what the client sent first: a
    /// plaintext HTTP request (`http://` to an HTTPS port) is reported as `.plaintextHTTP` so
    /// that the connection can say so, as nginx does, rather than fail the handshake silently.
    func handshake() -> Outcome {
        if !openingChecked {
            var opening = [UInt8](repeating: 0, count: 8)
            let peeked = opening.withUnsafeMutableBytes { raw in
                Result { () throws(SocketError) -> Int in try Syscall.peek(fd, raw.baseAddress!, raw.count) }
            }
            let count: Int
            switch peeked {
            case .success(let value): count = value
            case .failure(let error): return error.isWouldBlock ? .wantsRead : .failed
            }
            if count > 0 {
                openingChecked = true
                if Self.isPlaintextRequestLine(opening.prefix(count)) { return .plaintextHTTP }
            }
        }
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

    /// Whether `bytes`, a connection's first bytes, begin an HTTP request line: a method token of
    /// capital letters followed by a space (`GET `, `POST `), or only capitals so far. A TLS
    /// connection begins with a record type (0x16 for a handshake, RFC 8446 §5.1), and an SSLv2
    /// hello with a byte of 0x80 or more: never a capital letter.
    static func isPlaintextRequestLine(_ bytes: some Collection<UInt8>) -> Bool {
        guard let first = bytes.first, (0x41...0x5A).contains(first) else { return false }
        for byte in bytes.dropFirst() {
            if byte == 0x20 { return true }
            guard (0x41...0x5A).contains(byte) else { return false }
        }
        return true
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
