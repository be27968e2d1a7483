import COpenSSL
import Glibc
import Synchronization

/// The client side's TLS configuration — TLS 1.2 or later, peers verified against the system
/// store or a CA file — made once per CA file and shared by every session, since making an
/// OpenSSL context (fetching algorithms, parsing the store) costs far more than a handshake's
/// own work. A CA file is read again when its size or modification time changes.
final class TLSClientContext: @unchecked Sendable {
    let context: OpaquePointer
    private let stamp: FileStamp?

    private struct FileStamp: Equatable {
        var size: Int
        var seconds: Int
        var nanoseconds: Int

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            size = Int(info.st_size)
            seconds = Int(info.st_mtim.tv_sec)
            nanoseconds = Int(info.st_mtim.tv_nsec)
        }
    }

    private static let cache = Mutex<[String: TLSClientContext]>([:])

    /// The shared context for `caFile` (nil: the system store).
    static func shared(caFile: String?) throws(HTTPClient.Failure) -> TLSClientContext {
        let key = caFile ?? ""
        let stamp = caFile.flatMap(FileStamp.init)
        if let cached = cache.withLock({ $0[key] }), cached.stamp == stamp { return cached }
        let made = try TLSClientContext(caFile: caFile, stamp: stamp)
        cache.withLock { $0[key] = made }
        return made
    }

    private init(caFile: String?, stamp: FileStamp?) throws(HTTPClient.Failure) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .tls(TLSServerContext.drainErrors("SSL_CTX_new failed")) }
        // Configured before any session exists: a session copies the verify mode when made.
        _ = shim_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        _ = SSL_CTX_set_options(context, shim_client_options())
        // OpenSSL writes to the socket with write(2): a receiver that vanished mid-write would
        // raise SIGPIPE and end the whole mock. Ignored once, before the first TLS session.
        signal(SIGPIPE, SIG_IGN)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let loaded = caFile.map { SSL_CTX_load_verify_locations(context, $0, nil) } ?? SSL_CTX_set_default_verify_paths(context)
        guard loaded == 1 else {
            SSL_CTX_free(context)
            throw .tls(TLSServerContext.drainErrors(caFile.map { "cannot load CA file \($0)" } ?? "cannot load the system CA store"))
        }
        self.context = context
        self.stamp = stamp
    }

    deinit {
        SSL_CTX_free(context)
    }
}
