/// Dates as mail headers write them (RFC 5322 §3.3): `Thu, 26 Nov 2026 18:00:00 +0000`.
enum MailDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `seconds` since 1970 (UTC), clamped to the years 1970 to 9999.
    static func format(_ seconds: Int64) -> String {
        let clamped = min(max(seconds, 0), 253_402_300_799)
        let day = clamped / 86_400
        let second = clamped % 86_400
        // Days to a civil date (H. Hinnant's algorithm), all in non-negative integers here.
        let z = day + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // 1970-01-01 was a Thursday.
        return "\(days[Int((day + 4) % 7)]), \(dayOfMonth) \(months[Int(month - 1)]) \(year) \(two(second / 3600)):\(two(second % 3600 / 60)):\(two(second % 60)) +0000"
    }
}
