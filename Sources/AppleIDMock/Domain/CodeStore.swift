import Synchronization

/// Authorization codes: single use, short-lived, bound to their client, redirect URI and PKCE
/// verifier (apple-reference.md §1.2, §9). Redemption is one critical section, so a code is
/// redeemed at most once however many requests race for it.
public final class CodeStore: Sendable {
    private struct Entry {
        var grant: AuthorizationGrant
        var used: Bool
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var lastPrune: Int64 = 0
    }

    private let state = Mutex(State())

    /// An empty store.
    public init() {}

    /// Stores `grant` under `code`.
    public func issue(_ code: String, _ grant: AuthorizationGrant, now: Int64) {
        state.withLock { state in
            Self.pruneIfDue(&state, now: now)
            state.entries[code] = Entry(grant: grant, used: false)
        }
    }

    /// Redeems `code` at `now`: fails when unknown, used, expired, or when `check` (run inside
    /// the critical section, with no suspension) rejects the request's bindings. Only a fully
    /// successful redemption marks the code used.
    public func redeem(_ code: String, now: Int64, check: (AuthorizationGrant) -> OAuthError?) -> Result<AuthorizationGrant, OAuthError> {
        state.withLock { state in
            guard var entry = state.entries[code] else { return .failure(.codeExpired) }
            if entry.used { return .failure(.codeAlreadyUsed) }
            if now >= entry.grant.expiresAt { return .failure(.codeExpired) }
            if let error = check(entry.grant) { return .failure(error) }
            entry.used = true
            state.entries[code] = entry
            return .success(entry.grant)
        }
    }

    /// Codes held now (used ones stay until they expire, to answer "already been used").
    public var count: Int { state.withLock { $0.entries.count } }

    /// Drops expired codes; runs at most once per second of mock time.
    public func prune(now: Int64) {
        state.withLock { Self.pruneIfDue(&$0, now: now, force: true) }
    }

    private static func pruneIfDue(_ state: inout State, now: Int64, force: Bool = false) {
        guard force || now != state.lastPrune else { return }
        state.lastPrune = now
        state.entries = state.entries.filter { $0.value.grant.expiresAt > now }
    }
}
