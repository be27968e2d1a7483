import JOSE
import Synchronization

/// The per-page values that tie a consent form's POST to the page this server rendered (without
/// them, a form on any site that posted `mock_action=continue` would approve a sign-in with no page shown).
/// Each value is taken once. The newest `capacity` pages are remembered, and a page older than
/// those answers as a form nobody was shown. Restarting the mock forgets them all: an open
/// consent page then has to be loaded again.
final class ConsentTickets: Sendable {
    static let capacity = 10_000
    private let issued = Mutex(Issued())

    private struct Issued {
        var live: Set<String> = []
        var order: [String] = []
        var head = 0
    }

    /// A new value for a page about to be rendered: 128 random bits, hex.
    func issue() -> String {
        let ticket = SecureRandom.bytes(16).map { byte in
            let hex = Array("0123456789abcdef".utf8)
            return String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
        issued.withLock { issued in
            if issued.order.count < Self.capacity {
                issued.order.append(ticket)
            } else {
                issued.live.remove(issued.order[issued.head])
                issued.order[issued.head] = ticket
                issued.head = (issued.head + 1) % Self.capacity
            }
            issued.live.insert(ticket)
        }
        return ticket
    }

    /// Whether `ticket` is one this server rendered and nobody has used; it is used up either way.
    func take(_ ticket: String?) -> Bool {
        guard let ticket, ticket.utf8.count == 32 else { return false }
        return issued.withLock { $0.live.remove(ticket) != nil }
    }
}
