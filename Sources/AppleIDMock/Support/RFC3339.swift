/// RFC 3339 timestamps (`2030-01-01T00:00:00Z`) to and from whole seconds since 1970, for the
/// clock API and scenarios. Written here because FoundationEssentials' formatters are not needed
/// for one fixed format, and parsing must never trap on input.
package enum RFC3339 {
    /// Seconds since 1970 for `text`: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, years 1970–9999
    /// (fractions are dropped); nil for anything else.
    package static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[from..<from + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), bytes[4] == 45, let month = number(5, 2), bytes[7] == 45, let day = number(8, 2),
              bytes[10] == 84 || bytes[10] == 116, let hour = number(11, 2), bytes[13] == 58, let minute = number(14, 2),
              bytes[16] == 58, let second = number(17, 2) else { return nil }
        guard year >= 1970, (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61 else { return nil }
        var index = 19
        if bytes[index] == 46 {
            index += 1
            let start = index
            while index < bytes.count && (48...57).contains(bytes[index]) { index += 1 }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offset: Int64 = 0
        switch bytes[index] {
        case 90, 122:
            guard index + 1 == bytes.count else { return nil }
        case 43, 45:
            guard index + 6 == bytes.count, let offsetHours = number(index + 1, 2), bytes[index + 3] == 58,
                  let offsetMinutes = number(index + 4, 2), offsetHours < 24, offsetMinutes < 60 else { return nil }
            offset = (offsetHours * 3600 + offsetMinutes * 60) * (bytes[index] == 43 ? 1 : -1)
        default:
            return nil
        }
        return daysSinceEpoch(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + min(second, 59) - offset
    }

    /// The instants `format` writes: 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
    static let formattable: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    /// `YYYY-MM-DDTHH:MM:SSZ` for `seconds` since 1970 (UTC); an instant outside years 0 to 9999
    /// is written as the nearest end, so any value is written without trapping (−2⁶³
    /// overflowed the day arithmetic).
    package static func format(_ seconds: Int64) -> String {
        let seconds = min(max(seconds, formattable.lowerBound), formattable.upperBound)
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let rest = seconds - days * 86400
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(year)
        return "\(String(repeating: "0", count: max(0, 4 - yearText.count)))\(yearText)-\(two(month))-\(two(day))T"
            + "\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))Z"
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The date of a day count from 1970-01-01 (`civil_from_days`).
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
