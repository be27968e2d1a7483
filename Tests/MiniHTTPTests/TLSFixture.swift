import Foundation
import Glibc
import MiniHTTP

/// One test CA and server certificate (for `localhost`, `127.0.0.1` and `::1`) written to a
/// temporary directory once per test process, shared by every test that serves HTTPS.
enum TLSFixture {
    /// The directory and the CA, chain and key files in it.
    static let files: (directory: String, ca: String, chain: String, key: String) = {
        let directory = NSTemporaryDirectory() + "minihttp-tls-\(getpid())"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let authority = try! TestCertificateAuthority(names: ["localhost", "127.0.0.1", "::1"])
        let paths = (directory, directory + "/ca.pem", directory + "/cert.pem", directory + "/key.pem")
        try! Data(authority.caPEM.utf8).write(to: URL(fileURLWithPath: paths.1))
        try! Data(authority.chainPEM.utf8).write(to: URL(fileURLWithPath: paths.2))
        try! Data(authority.keyPEM.utf8).write(to: URL(fileURLWithPath: paths.3))
        return paths
    }()

    /// A server context for the fixture's certificate.
    static func context() throws -> TLSServerContext {
        try TLSServerContext(certificateChain: files.chain, privateKey: files.key)
    }

    /// A client that trusts `ca` (the fixture's CA by default; nil: the system store only), with
    /// timeouts that fail a test instead of hanging it.
    static func client(ca: String? = files.ca) -> HTTPClient {
        var client = HTTPClient()
        client.caFile = ca
        client.connectTimeout = 5
        client.responseTimeout = 5
        return client
    }
}
