/// Everything one dashboard render shows, read from the state owner, the delivery log, the
/// request journal, the mailbox and the event feed through their ordinary read accessors, each
/// bounded: the first `userLimit` users, and the newest 100 notifications, requests, messages and
/// events. Nothing here changes anything.
struct DashboardSnapshot {
    /// Most users listed ("showing N of M" beyond).
    static let userLimit = 2000
    /// Most notifications, requests, messages and events listed, newest first.
    static let rowLimit = 100
    /// Journal entries the requests section looks through at most to find its rows.
    static let requestScanLimit = 20_000
    /// Header the dashboard's own background requests carry, so its requests section leaves them out.
    static let ownRequestHeader = "X-AppleID-Mock-Dashboard"

    /// The requests section's rows and how they were found.
    struct Requests {
        /// Matching entries, newest first, the dashboard's own left out.
        var entries: [JournalEntry]
        /// How many of the newest entries were looked through (all when `complete`).
        var scanned: Int
        /// Whether every kept entry was looked through.
        var complete: Bool
        /// The newest id in the journal, whatever the filters: where a long poll starts.
        var newest: UInt64
    }

    /// The world as it stands (a copy-on-write view).
    let world: World
    /// Mock now, whole seconds.
    let now: Int64
    /// Seconds the mock clock is ahead of real time.
    let offset: Double
    /// The users listed.
    let users: [UserAccount]
    /// How many users there are.
    let userCount: Int
    /// The newest notifications, newest first; nil without a deliverer.
    let notifications: [NotificationRecord]?
    /// The requests section; nil with the journal off.
    let requests: Requests?
    /// Names of the events the listed requests caused, by sequence (those still kept).
    let eventNames: [UInt64: String]
    /// The newest messages, newest first; nil without an SMTP port.
    let mail: [MailRecord]?
    /// The newest events, newest first.
    let events: [RecordedEvent]
    /// The newest event's sequence number when the render began: the page's long poll starts there.
    let lastEvent: UInt64

    /// Reads everything once.
    init(domain: AppleIDDomain, notifications deliverer: NotificationDeliverer?, journal: RequestJournal?, mailbox: MailBox?,
         query: DashboardQuery) {
        let stream = domain.events
        // The feed's position before the world: a change this render does not show comes after
        // `lastEvent`, so the page's long poll from there wakes for it.
        lastEvent = stream.lastSequence
        let view = domain.snapshot()
        world = view.world
        now = view.now
        offset = view.offset
        userCount = view.world.userOrder.count
        users = view.world.userOrder.prefix(Self.userLimit).compactMap { view.world.users[$0] }
        if let deliverer {
            let last = deliverer.lastID
            notifications = deliverer.records(after: last > UInt64(Self.rowLimit) ? last - UInt64(Self.rowLimit) : 0).suffix(Self.rowLimit).reversed()
        } else {
            notifications = nil
        }
        let requests = journal.map { Self.requests($0, query: query) }
        self.requests = requests
        eventNames = Self.eventNames(requests?.entries ?? [], stream: stream)
        mail = mailbox.map(Self.newestMail)
        events = stream.events(after: lastEvent > UInt64(Self.rowLimit) ? lastEvent - UInt64(Self.rowLimit) : 0, limit: Self.rowLimit).events.reversed()
    }

    /// Whether a journal entry is the dashboard's own: its page, script, style sheet and data, and
    /// the long polls it marks with `ownRequestHeader`.
    static func isOwn(_ entry: JournalEntry) -> Bool {
        if let path = entry.path, DashboardEndpoint.paths.contains(path) { return true }
        return entry.headers[ownRequestHeader] != nil
    }

    /// The newest `rowLimit` entries matching `query`, the dashboard's own left out, looking back
    /// through at most `requestScanLimit` entries: filtered on the records' keys, only the rows
    /// decoded.
    private static func requests(_ journal: RequestJournal, query: DashboardQuery) -> Requests {
        let newest = journal.lastID
        var filter = query.filter
        filter.leavesOutDashboard = true
        let page = journal.newest(matching: filter, limit: rowLimit, scanLimit: requestScanLimit)
        return Requests(entries: page.entries, scanned: page.scanned, complete: page.complete, newest: newest)
    }

    /// The names of the kept events among those `entries` caused.
    private static func eventNames(_ entries: [JournalEntry], stream: EventStream) -> [UInt64: String] {
        let sequences = entries.flatMap(\.events)
        guard let low = sequences.min(), let high = sequences.max(), high - low < 20_000 else { return [:] }
        var names: [UInt64: String] = [:]
        for recorded in stream.events(after: low - 1, limit: Int(high - low) + 1).events { names[recorded.sequence] = recorded.event.name }
        return names
    }

    /// The newest `rowLimit` messages, newest first. Kept ids run without gaps (the oldest go
    /// first, a clear takes all), so the first id and the count find the newest.
    private static func newestMail(_ mailbox: MailBox) -> [MailRecord] {
        guard let first = mailbox.records(after: 0, limit: 1).first?.id else { return [] }
        let last = first + UInt64(max(0, mailbox.usage.count - 1))
        let after = max(first - 1, last > UInt64(rowLimit) ? last - UInt64(rowLimit) : 0)
        return mailbox.records(after: after).suffix(rowLimit).reversed()
    }
}
