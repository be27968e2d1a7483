/// How the server delivers a response: at once and whole (the default), or — for fault
/// injection — later, cut short, or not at all. A delay waits on the connection's event loop
/// (a timer, not a sleep), so no other connection waits with it.
public struct HTTPDelivery: Sendable, Equatable {
    /// How the delivery ends instead of writing the whole response.
    public enum Cut: Sendable, Equatable {
        /// Close the connection without answering (a FIN).
        case close
        /// Reset the connection without answering (an RST: `SO_LINGER` of 0, then close).
        case reset
        /// Send the head (with the full `Content-Length`) and the first `bodyBytes` of the body, then close.
        case truncate(bodyBytes: Int)
        /// Send the head and the first `bodyBytes` of the body, then send nothing more, keeping
        /// the connection open until the client closes it or the write timeout passes.
        case stall(bodyBytes: Int)
    }

    /// The longest delay the server waits (10 minutes); longer ones are clamped.
    public static let maximumDelayMilliseconds = 600_000

    /// Milliseconds to wait before the response (or the cut) happens.
    public var delayMilliseconds: Int
    /// How it ends; nil: the whole response is written.
    public var cut: Cut?

    /// A delivery.
    public init(delayMilliseconds: Int = 0, cut: Cut? = nil) {
        self.delayMilliseconds = delayMilliseconds
        self.cut = cut
    }

    /// At once and whole.
    public static let normal = HTTPDelivery()

    /// The delay, clamped to 0…`maximumDelayMilliseconds`.
    var clampedDelay: Int { min(max(delayMilliseconds, 0), Self.maximumDelayMilliseconds) }
}
