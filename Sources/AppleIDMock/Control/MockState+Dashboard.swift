extension MockState {
    /// The world as it stands and mock now in whole seconds, read in one critical section, for
    /// the dashboard to render from outside the lock. The copy shares the world's storage
    /// (copy-on-write), so reading costs no copying; an operation that changes a collection while
    /// a render still holds it copies that collection once, the same as any snapshot would.
    func dashboardView() -> (world: World, now: Int64) {
        read { world, now in (world, now) }
    }
}
