/// One signing key's life at the mock: published, signing, retired, and when each happened.
package struct KeyRecord: Sendable {
    /// Where a key is in its life.
    package enum State: String, Sendable, Equatable {
        /// At `/auth/keys`, not signing.
        case published
        /// At `/auth/keys` and signing new tokens.
        case active
        /// Gone from `/auth/keys`; what it signed no longer verifies.
        case retired
    }

    /// The `kid`.
    package let keyID: String
    /// The key; dropped once retired.
    package private(set) var key: KeyRing.SigningKey?
    /// Where it is now.
    package private(set) var state: State
    /// When it was published (mock time).
    let publishedAt: Int64
    /// When it last began signing.
    private(set) var activatedAt: Int64?
    /// When it was retired.
    private(set) var retiredAt: Int64?

    /// A key published at `publishedAt`, signing from `activatedAt` when given.
    init(key: KeyRing.SigningKey, publishedAt: Int64, activatedAt: Int64?) {
        keyID = key.keyID
        self.key = key
        self.publishedAt = publishedAt
        self.activatedAt = activatedAt
        state = activatedAt == nil ? .published : .active
    }

    /// Begins signing.
    mutating func activate(at now: Int64) {
        state = .active
        activatedAt = now
    }

    /// Stops signing (another key took over); stays published.
    mutating func deactivate() {
        if state == .active { state = .published }
    }

    /// Leaves `/auth/keys` for good.
    mutating func retire(at now: Int64) {
        state = .retired
        retiredAt = now
        key = nil
    }
}
