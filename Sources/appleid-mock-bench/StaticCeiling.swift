import Foundation

/// nginx serving the mock's JWKS bytes as a static file: the most a static answer can be served
/// at on this machine with the same load.
enum StaticCeiling {
    /// Starts nginx on a free port serving `body` at `/auth/keys`, over TLS with `tls`'s
    /// certificate chain and key files when given; nil without nginx.
    static func start(body: [UInt8], workers: Int, tls: (certificate: String, key: String)? = nil) throws -> ServerProcess? {
        guard let nginx = Tool.find("nginx") else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appleid-mock-bench-nginx-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try Data(body).write(to: directory.appendingPathComponent("keys.json"))
        let port = ServerProcess.freePort()
        // Tuned to be the best static server it can be: no logs, keep-alive never capped.
        let configuration = """
        daemon off;
        master_process on;
        worker_processes \(workers);
        pid \(directory.path)/nginx.pid;
        error_log \(directory.path)/error.log error;
        events { worker_connections 4096; }
        http {
            access_log off;
            keepalive_requests 100000000;
            keepalive_timeout 120s;
            server {
                listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl") reuseport;\(tls.map { """

                ssl_certificate \($0.certificate);
                ssl_certificate_key \($0.key);
                ssl_protocols TLSv1.2 TLSv1.3;
        """ } ?? "")
                location = /auth/keys {
                    default_type application/json;
                    alias \(directory.path)/keys.json;
                }
            }
        }
        """
        try configuration.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", directory.path, "-c", directory.appendingPathComponent("nginx.conf").path, "-e", "\(directory.path)/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return try ServerProcess.adopt(process, port: port)
    }
}
