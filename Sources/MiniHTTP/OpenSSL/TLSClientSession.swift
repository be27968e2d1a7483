import COpenSSL
import Glibc

/// One client-side TLS session over a connected non-blocking socket: TLS 1.2 or 1.3, the peer's
/// certificate verified against the system store or a CA file, and its name checked. MiniHTTP
/// calls OpenSSL only from this folder (house style rule 4); every call waits with `poll` up to
/// a deadline, so a stalled peer costs a timeout, never a hung thread.
final class TLSClientSession {
    private let context: TLSClientContext
    private let ssl: OpaquePointer
    private let fd: Int32

    /// Handshakes with `host` on `fd` by `deadline` (monotonic ns).
    init(fd: Int32, host: String, caFile: String?, deadline: UInt64) throws(HTTPClient.Failure) {
        let context = try TLSClientContext.shared(caFile: caFile)
        guard let ssl = SSL_new(context.context) else { throw .tls(Self.drainErrors("SSL_new")) }
        self.context = context
        self.fd = fd
        self.ssl = ssl
        // The name to verify: an IP literal is checked as an address, anything else as a DNS name with SNI.
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else { throw .tls(Self.drainErrors("bad address \(host)")) }
        } else {
            _ = shim_SSL_set_tlsext_host_name(ssl, host)
            guard SSL_set1_host(ssl, host) == 1 else { throw .tls(Self.drainErrors("bad host name \(host)")) }
        }
        guard SSL_set_fd(ssl, fd) == 1 else { throw .tls(Self.drainErrors("SSL_set_fd")) }
        while true {
            ERR_clear_error()
            let result = SSL_connect(ssl)
            if result == 1 { break }
            try wait(result, deadline: deadline, doing: "TLS handshake")
        }
    }

    deinit {
        SSL_free(ssl)
    }

    /// Writes all of `bytes` by `deadline`.
    func write(_ bytes: [UInt8], deadline: UInt64) throws(HTTPClient.Failure) {
        var sent = 0
        while sent < bytes.count {
            ERR_clear_error()
            let result = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + sent, Int32(min($0.count - sent, 1 << 20))) }
            if result > 0 {
                sent += Int(result)
                continue
            }
            try wait(result, deadline: deadline, doing: "TLS write")
        }
    }

    /// Reads up to `count` bytes by `deadline`; 0 at the end of the stream.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: UInt64) throws(HTTPClient.Failure) -> Int {
        while true {
            ERR_clear_error()
            let result = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, 1 << 20)))
            if result > 0 { return Int(result) }
            let code = SSL_get_error(ssl, result)
            if code == SSL_ERROR_ZERO_RETURN { return 0 }
            // With SSL_OP_IGNORE_UNEXPECTED_EOF a close without close_notify is ZERO_RETURN above;
            // a bare SYSCALL error is a reset, which ends the stream as it does for plain sockets
            // (`HTTPClient` reads ECONNRESET as the end): a receiver that answers and then closes
            // with our request unread resets, and its answer stands. A length-framed answer cut
            // short is still caught by the reader.
            if code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 { return 0 }
            try wait(result, deadline: deadline, doing: "TLS read")
        }
    }

    /// Waits for the socket when OpenSSL wants to read or write; throws on anything else.
    private func wait(_ result: Int32, deadline: UInt64, doing what: String) throws(HTTPClient.Failure) {
        let code = SSL_get_error(ssl, result)
        let events: Int16
        switch code {
        case SSL_ERROR_WANT_READ: events = Int16(POLLIN)
        case SSL_ERROR_WANT_WRITE: events = Int16(POLLOUT)
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                ERR_clear_error()
                throw .tls("certificate verify failed: \(String(cString: X509_verify_cert_error_string(verify)))")
            }
            throw .tls(Self.drainErrors("\(what) failed"))
        }
        try HTTPClient.poll(fd, events: events, deadline: deadline, doing: what)
    }

    /// The queued OpenSSL errors as one line, the queue emptied (read at the throw site).
    private static func drainErrors(_ context: String) -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? context : "\(context): \(messages.joined(separator: "; "))"
    }
}
