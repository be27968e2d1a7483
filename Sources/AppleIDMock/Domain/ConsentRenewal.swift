/// A consent that lives on under a new id, so the tokens issued under the old one die while the
/// user stays signed up to the app group (a password change, apple-behaviour.md §9).
package struct ConsentRenewal: Sendable, Equatable {
    /// The team of the app group.
    var teamID: String
    /// The app group's primary App ID.
    var groupID: String
    /// The id the consent's tokens name until now.
    var from: UInt32
    /// The id it has from now on (new, never used before).
    var to: UInt32
}
