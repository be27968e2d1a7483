/// How often one refresh token was refreshed within a mock day, while the knob
/// `refresh_throttle` is set (apple-behaviour.md §9: "up to once a day", Apple "may throttle").
package struct RefreshCount: Sendable, Equatable {
    /// The refresh token, as its payload names it: a token is one code's redemption.
    struct Token: Hashable, Sendable {
        /// The consent it was issued under.
        var consentID: UInt32
        /// The client it was issued to.
        var clientID: String
        /// When it was issued.
        var issuedAt: Int64
    }

    /// The token counted.
    var token: Token
    /// The mock day (UTC) counted: mock seconds since 1970 divided by 86,400.
    var day: Int64
    /// Its refreshes within `day`, this one included.
    var count: Int

    /// The mock day (UTC) `now` falls in.
    static func day(of now: Int64) -> Int64 {
        now >= 0 ? now / 86_400 : (now - 86_399) / 86_400
    }
}
