/// Sees every exchange a server has (`HTTPServerConfiguration.observer`). Called on the event
/// loop's thread of the exchange's connection, once its answer is queued for writing (or it was
/// cut off): keep it quick and non-blocking, such as an append under a short lock.
public protocol HTTPExchangeObserver: Sendable {
    /// Records one exchange.
    func observe(_ exchange: HTTPExchange)
}
