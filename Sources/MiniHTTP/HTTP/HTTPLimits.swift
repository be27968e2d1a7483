/// Bounds on what a client may send and how long it may take. Every input is bounded.
public struct HTTPLimits: Sendable {
    /// Request line plus header fields, including the blank line (431 beyond).
    public var maxHeadBytes: Int = 16 * 1024
    /// Number of header fields (431 beyond).
    public var maxHeaderCount: Int = 100
    /// Body bytes after de-chunking (413 beyond).
    public var maxBodyBytes: Int = 1024 * 1024
    /// Length of one chunk-size line (400 beyond).
    public var maxChunkLineBytes: Int = 1024
    /// Seconds from a request's first byte to the end of its headers.
    public var headerTimeout: Double = 10
    /// Seconds from a request's first byte to the end of its body.
    public var requestTimeout: Double = 30
    /// Seconds a keep-alive connection may sit idle between requests.
    public var idleTimeout: Double = 60
    /// Seconds a response write may make no progress (client not reading).
    public var writeTimeout: Double = 30

    /// The defaults above.
    public init() {}
}
