import Glibc

/// A client's IP address and port as the server accepted it.
public struct HTTPPeerAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address in text: `127.0.0.1` or `::1` (IPv4-mapped IPv6 addresses as the kernel gives them).
    public var host: String
    /// The client's port.
    public var port: Int

    /// An address from its parts.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:5000`, or `[::1]:5000` for IPv6.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The address in a `sockaddr_storage` filled by `accept4`; nil for a family other than IPv4 or IPv6.
    init?(_ storage: sockaddr_storage) {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let port: UInt16
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            var bytes = address.sin_addr
            guard inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
            port = address.sin_port
        case AF_INET6:
            let address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            var bytes = address.sin6_addr
            guard inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
            port = address.sin6_port
        default:
            return nil
        }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.init(host: host, port: Int(UInt16(bigEndian: port)))
    }
}
