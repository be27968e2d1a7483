/// Dates as mail headers write them (RFC 5322 §3.3): `Thu, 26 Nov 2026 18:00:00 +0000`.
enum MailDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `seconds` since 1970 (UTC), clamped to the years 1970 to 9999.
    static func format(_ seconds: Int64) -> String {
        let clamped = min(max(seconds, 0), 253_402_300_799)
        let day = clamped / 86_400
        let second = clamped % 86_400
        let (year, month, dayOfMonth) = RFC3339.civil(fromDays: day)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // 1970-01-01 was a Thursday.
        return "\(days[Int((day + 4) % 7)]), \(dayOfMonth) \(months[Int(month - 1)]) \(year) \(two(second / 3600)):\(two(second % 3600 / 60)):\(two(second % 60)) +0000"
    }
}
