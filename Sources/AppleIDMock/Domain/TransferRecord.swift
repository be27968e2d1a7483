/// One user's team transfer (apple-reference.md §8): the `transfer_sub` handed to the sending
/// team, which the receiving team redeems, and which its id_tokens carry during the window.
public struct TransferRecord: Sendable, Equatable {
    /// User id.
    public var userID: String
    /// The sending team.
    public var fromTeam: String
    /// The receiving team.
    public var toTeam: String
    /// The `transfer_sub`.
    public var transferSubject: String
    /// When the sending team first asked for it.
    public var createdAt: Int64
}
