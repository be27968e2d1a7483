import MiniHTTP

/// Two exchange observers in one: the request journal and one the configuration already had.
final class ObserverPair: HTTPExchangeObserver {
    let first: any HTTPExchangeObserver
    let second: any HTTPExchangeObserver

    init(first: any HTTPExchangeObserver, second: any HTTPExchangeObserver) {
        self.first = first
        self.second = second
    }

    func observe(_ exchange: consuming HTTPExchange) {
        first.observe(copy exchange)
        second.observe(exchange)
    }
}
