extension AppleIDMockServer {
    /// The journaled requests matching `filter` (all kept when none is set), oldest first: what
    /// `GET /__mock/requests` lists, for a Swift suite to assert on a backend's calls to Apple.
    /// Empty with the journal off.
    public func requests(matching filter: RequestFilter = RequestFilter()) -> [JournalEntry] {
        assembly.journal?.entries(matching: filter).entries ?? []
    }

    /// Waits up to `seconds` (at most 60) for a journaled request matching `filter`, then answers
    /// as `requests(matching:)`: a test awaits a backend's call without sleeping.
    public func requests(matching filter: RequestFilter, waitingUpTo seconds: Double) async -> [JournalEntry] {
        guard let journal = assembly.journal else { return [] }
        return await journal.awaitEntries(matching: filter, limit: .max, seconds: min(max(seconds, 0), 60)).entries
    }

    /// Forgets every journaled request (`DELETE /__mock/requests`); returns how many.
    @discardableResult
    public func clearRequests() -> Int { assembly.journal?.clear() ?? 0 }
}
