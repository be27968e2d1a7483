extension AppleIDDomain {
    // MARK: - Delivery (apple-behaviour.md §7)

    /// Records what the notification deliverer did — an attempt ended, the log was cleared —
    /// through the one door: an event in the one sequence, in the feed and the state file like
    /// every other, which the deliverer then takes up into its log in that order.
    func record(delivery: DeliveryEvent) {
        owner.perform { _, _, changes in changes.emit(.delivery(delivery)) }
    }
}
