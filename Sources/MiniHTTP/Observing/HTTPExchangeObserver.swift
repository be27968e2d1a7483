/// Sees every exchange a server has (`HTTPServerConfiguration.observer`). Called on the event
/// loop's thread of the exchange's connection, once its answer is queued for writing (or it was
/// cut off): keep it quick and non-blocking, such as an append under a short lock. A class, so
/// that the loops hold it with a reference count rather than copying a value at every exchange.
public protocol HTTPExchangeObserver: AnyObject, Sendable {
    /// Records one exchange; it is the observer's to keep (no copy is made for it).
    func observe(_ exchange: consuming HTTPExchange)
}
