/// One user's team transfer (apple-behaviour.md §8): the `transfer_sub` handed to the sending
/// team, which the receiving team redeems, and which its id_tokens carry during the window.
package struct TransferRecord: Sendable, Equatable {
    /// User id.
    var userID: String
    /// The sending team.
    var fromTeam: String
    /// The receiving team.
    var toTeam: String
    /// The `transfer_sub`.
    package var transferSubject: String
    /// When the sending team first asked for it.
    var createdAt: Int64
}
