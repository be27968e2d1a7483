/// What a user agreed to the first time they signed in to an app group (apple-behaviour.md §5,
/// §6). Consent is shared by an App ID and everything grouped under it; tokens name the consent
/// they were issued under, so they die with it.
package struct Consent: Sendable, Equatable {
    /// Identifies a consent: the user, and the team's app group (its primary App ID).
    struct Key: Hashable, Sendable {
        /// Team ID.
        package var teamID: String
        /// The primary App ID of the group.
        var groupID: String
        /// User id.
        var userID: String

        /// A key from its parts.
        init(teamID: String, groupID: String, userID: String) {
            self.teamID = teamID
            self.groupID = groupID
            self.userID = userID
        }
    }

    /// Who ended a consent, which decides the refresh error (§2.1, open question 7).
    package enum Revocation: String, Sendable, Equatable {
        /// The app called `/auth/revoke`.
        case byApp = "app"
        /// The user stopped using Sign in with Apple for the app (or deleted the account).
        case byUser = "user"
        /// The user changed their password: the consent lives on under a new id, its old
        /// tokens are dead (§9).
        case passwordChanged = "password"
    }

    /// Unique for every grant, never reused (not even across resets): a re-consent is a new id.
    package var id: UInt32
    /// Scopes granted (`name`, `email`).
    package var scopes: Set<String>
    /// Whether the user chose Hide My Email.
    package var hideEmail: Bool
    /// When it was granted.
    var grantedAt: Int64
}
