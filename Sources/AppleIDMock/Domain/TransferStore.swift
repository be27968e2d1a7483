import Synchronization

/// Team transfers (apple-reference.md §8): which `transfer_sub` was handed out for which user
/// moving from one team to another, and when, so the receiving team can redeem it and its
/// id_tokens carry it during the transfer window.
public final class TransferStore: Sendable {
    /// One user's transfer to one team.
    public struct Record: Sendable, Equatable {
        /// Scenario user id.
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

    private let state = Mutex([String: Record]())

    /// An empty store.
    public init() {}

    /// The record for a user moving between teams, created on first request; the
    /// `transfer_sub` is one-to-one per (user, target team) and stable across requests (§8).
    /// Asking again after the window has closed starts a new window (TN3159: transfer again).
    public func record(userID: String, fromTeam: String, toTeam: String, now: Int64, window: Int64) -> Record {
        let subject = Identity.subject(teamID: "transfer|\(fromTeam)|\(toTeam)", userID: userID)
        return state.withLock { records in
            if let existing = records[subject], now < existing.createdAt + window { return existing }
            let record = Record(userID: userID, fromTeam: fromTeam, toTeam: toTeam, transferSubject: subject, createdAt: now)
            records[subject] = record
            return record
        }
    }

    /// The record for a `transfer_sub`.
    public func record(transferSubject: String) -> Record? {
        state.withLock { $0[transferSubject] }
    }

    /// The live transfer of `userID` into `toTeam`, if any.
    public func transfer(userID: String, toTeam: String, now: Int64, window: Int64) -> Record? {
        state.withLock { records in
            records.values.first { $0.userID == userID && $0.toTeam == toTeam && now < $0.createdAt + window }
        }
    }
}
