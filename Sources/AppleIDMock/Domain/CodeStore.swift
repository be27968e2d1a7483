import Synchronization

/// Authorization codes: single use, short-lived, bound to their client, redirect URI and PKCE
/// verifier (apple-reference.md §1.2, §9). Redemption is one critical section, so a code is
/// redeemed at most once however many requests race for it.
///
/// Only codes not yet redeemed are held. A redeemed code leaves nothing behind: the code is a
/// MAC'd token carrying its own issue time (`TokenCodec`, kind `c`), so "already used" is told
/// from "expired" by reading the code itself. Memory therefore follows the codes in flight,
/// not the codes ever issued.
public final class CodeStore: Sendable {
    private struct State {
        var pending: [String: AuthorizationGrant] = [:]
        var lastPrune: Int64 = 0
    }

    private let state = Mutex(State())
    /// Most codes held at once; beyond it new codes are refused rather than memory grown
    /// (probe finding F5). Each holds at most a few KiB (request strings are bounded).
    public let capacity: Int

    /// An empty store holding at most `capacity` pending codes.
    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// Whether another code fits at `now` (expired codes are dropped first when full).
    public func hasRoom(now: Int64) -> Bool {
        state.withLock { state in
            if state.pending.count >= capacity { Self.pruneIfDue(&state, now: now, force: true) }
            return state.pending.count < capacity
        }
    }

    /// Stores `grant` under `code`.
    public func issue(_ code: String, _ grant: AuthorizationGrant, now: Int64) {
        state.withLock { state in
            Self.pruneIfDue(&state, now: now)
            state.pending[code] = grant
        }
    }

    /// Redeems `code` at `now`: fails when unknown, used, expired, or when `check` (run inside
    /// the critical section, with no suspension) rejects the request's bindings. Only a fully
    /// successful redemption consumes the code.
    ///
    /// `issuedExpiry` tells when `code` expires if this mock issued it (read from the code), nil
    /// for a code it never issued: a genuine code that is no longer pending and not yet expired
    /// has been used. It is asked only for a code that is not pending.
    public func redeem(_ code: String, now: Int64, issuedExpiry: (String) -> Int64?,
                       check: (AuthorizationGrant) -> OAuthError?) -> Result<AuthorizationGrant, OAuthError> {
        state.withLock { state in
            guard let grant = state.pending[code] else {
                if let expiry = issuedExpiry(code), now < expiry { return .failure(.codeAlreadyUsed) }
                return .failure(.codeExpired)
            }
            if now >= grant.expiresAt {
                state.pending[code] = nil
                return .failure(.codeExpired)
            }
            if let error = check(grant) { return .failure(error) }
            state.pending[code] = nil
            return .success(grant)
        }
    }

    /// Codes issued and not yet redeemed (expired ones linger until the next prune).
    public var count: Int { state.withLock { $0.pending.count } }

    /// Drops expired codes now.
    public func prune(now: Int64) {
        state.withLock { Self.pruneIfDue(&$0, now: now, force: true) }
    }

    /// At most once per second of mock time, in place.
    private static func pruneIfDue(_ state: inout State, now: Int64, force: Bool = false) {
        guard force || now != state.lastPrune else { return }
        state.lastPrune = now
        state.pending = state.pending.filter { $0.value.expiresAt > now }
    }
}
