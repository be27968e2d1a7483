/// What a reset started from (`DomainEvent.reset`): the scenario's initial state at `now` on
/// `clock`, with a new token MAC secret, so no code or token from before works after.
package struct ResetRecord: Sendable, Equatable {
    /// The clock after the reset.
    package var clock: MockClock
    /// Mock time the new state begins at.
    package var now: Int64
    /// The new token MAC secret.
    package var secret: [UInt8]
    /// The id the next consent gets (ids are never reused, not even across resets).
    var firstConsentID: UInt32
}
