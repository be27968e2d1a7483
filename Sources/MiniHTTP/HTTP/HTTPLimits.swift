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
    /// Seconds from a request's first byte to the end of its headers. Empty lines before a
    /// request line count as its first bytes (RFC 9112 §2.2 lets a server ignore them, not wait
    /// for them): when only empty lines came in that time, the connection is closed without a 408.
    public var headerTimeout: Double = 10
    /// Seconds from a request's first byte to the end of its body.
    public var requestTimeout: Double = 30
    /// Seconds a keep-alive connection may sit idle between requests, counted from when it was
    /// accepted or its last response was fully written. Received bytes do not restart it; once
    /// any arrive, `headerTimeout` applies instead. So a trickle of empty lines is cut off too.
    public var idleTimeout: Double = 60
    /// Seconds a response may take to be written, counted from when it was queued: a deadline per
    /// response, which a client reading a few bytes at a time cannot extend.
    public var writeTimeout: Double = 30

    /// The defaults above.
    public init() {}
}
