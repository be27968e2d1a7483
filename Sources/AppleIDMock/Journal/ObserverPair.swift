import MiniHTTP

/// Two exchange observers in one: the request journal and one the configuration already had.
struct ObserverPair: HTTPExchangeObserver {
    let first: any HTTPExchangeObserver
    let second: any HTTPExchangeObserver

    func observe(_ exchange: HTTPExchange) {
        first.observe(exchange)
        second.observe(exchange)
    }
}
