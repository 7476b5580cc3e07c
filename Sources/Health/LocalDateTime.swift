import Foundation
internal import Support

/// A local wall-clock time without a zone or offset, in the proleptic Gregorian calendar (years 1-9999).
///
/// Statistics queries give `from`, `to` and `anchor` as wall times when they carry no offset
/// (`docs/store-semantics.md`, item 19); ``StatisticsBuckets/instant(for:in:)`` turns one into an ``Instant``
/// in a zone.
public struct LocalDateTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int
    public let hour: Int
    public let minute: Int
    public let second: Int
    public let millisecond: Int

    /// A validated wall time.
    ///
    /// - Throws: ``StatisticsBucketError/invalidTime(_:reason:)`` for a field out of range (no leap seconds).
    public init(
        year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, millisecond: Int = 0
    ) throws(StatisticsBucketError) {
        // The text only for an error: formatting it for every valid time cost an import a sixth of its time.
        var text: String { LocalDateTime.format(year, month, day, hour, minute, second, millisecond) }
        guard (1...9999).contains(year) else { throw .invalidTime(text, reason: "the year must be from 1 to 9999") }
        guard (1...12).contains(month) else { throw .invalidTime(text, reason: "the month must be from 1 to 12") }
        let monthLength = LocalDateTime.daysInMonth(year: year, month: month)
        guard (1...monthLength).contains(day) else {
            throw .invalidTime(text, reason: "the day must be from 1 to \(monthLength)")
        }
        guard (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second),
            (0...999).contains(millisecond)
        else { throw .invalidTime(text, reason: "the time of day must be from 00:00:00.000 to 23:59:59.999") }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.millisecond = millisecond
    }

    /// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM`, `YYYY-MM-DDTHH:MM:SS` or `YYYY-MM-DDTHH:MM:SS.f` (1-3 fraction
    /// digits). An offset or `Z` is an error here; ``StatisticsTime/init(parsing:)`` accepts both forms.
    ///
    /// - Throws: ``StatisticsBucketError/invalidTime(_:reason:)``.
    public init(parsing text: String) throws(StatisticsBucketError) {
        var scanner = TimeScanner(text)
        let local = try scanner.localDateTime()
        guard scanner.isAtEnd else {
            throw .invalidTime(text, reason: "unexpected text after the wall time; an offset makes it an instant")
        }
        self = local
    }

    /// `2025-03-30T02:30:00`, with `.fff` when the milliseconds are not zero.
    public var description: String {
        LocalDateTime.format(year, month, day, hour, minute, second, millisecond)
    }

    /// ISO weekday: 1 = Monday ... 7 = Sunday.
    public var weekday: Int {
        let days = LocalDateTime.daysFromCivil(year, month, day)
        let mondayBased = (days + 3) % 7  // 1970-01-01 was a Thursday
        return Int(mondayBased < 0 ? mondayBased + 7 : mondayBased) + 1
    }

    /// Whether this is 00:00:00.000.
    public var isMidnight: Bool { hour == 0 && minute == 0 && second == 0 && millisecond == 0 }

    /// The same time of day `days` calendar days later (earlier when negative).
    ///
    /// - Throws: ``StatisticsBucketError/outOfSupportedRange(_:)`` beyond the years 1-9999.
    public func adding(days: Int) throws(StatisticsBucketError) -> LocalDateTime {
        let start = LocalDateTime.daysFromCivil(year, month, day)
        let (target, overflow) = start.addingReportingOverflow(Int64(days))
        guard !overflow, LocalDateTime.supportedDays.contains(target) else {
            throw .outOfSupportedRange("\(self) + \(days) days")
        }
        let (y, m, d) = LocalDateTime.civilFromDays(target)
        return LocalDateTime(unchecked: y, m, d, hour, minute, second, millisecond)
    }

    public static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool {
        lhs.naiveMilliseconds < rhs.naiveMilliseconds
    }

    // MARK: Internal arithmetic

    /// The wall time read as if it were UTC, in milliseconds since the epoch.
    public var naiveMilliseconds: Int64 {
        let days = LocalDateTime.daysFromCivil(year, month, day)
        let seconds = Int64(hour) * 3600 + Int64(minute) * 60 + Int64(second)
        return (days * 86_400 + seconds) * 1000 + Int64(millisecond)
    }

    /// The inverse of ``naiveMilliseconds``.
    init(naiveMilliseconds ms: Int64) throws(StatisticsBucketError) {
        guard LocalDateTime.supportedMilliseconds.contains(ms) else {
            throw .outOfSupportedRange("\(ms) ms")
        }
        let days = LocalDateTime.floorDivide(ms, 86_400_000)
        let inDay = ms - days * 86_400_000
        let (y, m, d) = LocalDateTime.civilFromDays(days)
        self.init(
            unchecked: y, m, d, Int(inDay / 3_600_000), Int(inDay / 60_000 % 60), Int(inDay / 1000 % 60),
            Int(inDay % 1000))
    }

    private init(unchecked year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int, _ ms: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.millisecond = ms
    }

    /// Days from 0001-01-01 to 9999-12-31, counted from 1970-01-01.
    static let supportedDays: ClosedRange<Int64> = daysFromCivil(1, 1, 1)...daysFromCivil(9999, 12, 31)
    static let supportedMilliseconds: ClosedRange<Int64> =
        (supportedDays.lowerBound * 86_400_000)...(supportedDays.upperBound * 86_400_000 + 86_399_999)

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    private static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        CivilCalendar.days(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// The inverse of ``daysFromCivil(_:_:_:)``.
    private static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let date = CivilCalendar.date(days: days)
        return (Int(date.year), Int(date.month), Int(date.day))
    }

    private static func format(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int, _ ms: Int) -> String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value.magnitude)
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let base = "\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2))"
        return ms == 0 ? base : "\(base).\(pad(ms, 3))"
    }
}

extension LocalDateTime {
    /// 2000-01-03T00:00, a Monday, built without validation because the fields are constants.
    init(defaultAnchor: Void) {
        self.init(unchecked: 2000, 1, 3, 0, 0, 0, 0)
    }
}

// MARK: - ISO 8601 scanning

/// Reads the fixed-width ISO 8601 forms `StatisticsTime` and `LocalDateTime` accept.
struct TimeScanner {
    private let text: String
    private let characters: [Character]
    private var index = 0

    init(_ text: String) {
        self.text = text
        self.characters = Array(text)
    }

    var isAtEnd: Bool { index == characters.count }

    private var current: Character? { index < characters.count ? characters[index] : nil }

    private func fail(_ reason: String) -> StatisticsBucketError {
        .invalidTime(text, reason: "\(reason) at character \(index + 1)")
    }

    private mutating func number(digits: Int, _ what: String) throws(StatisticsBucketError) -> Int {
        var value = 0
        for _ in 0..<digits {
            guard let character = current, character.isASCII, let digit = character.wholeNumberValue else {
                throw fail("expected \(digits) digits of the \(what)")
            }
            value = value * 10 + digit
            index += 1
        }
        return value
    }

    private mutating func expect(_ character: Character, _ what: String) throws(StatisticsBucketError) {
        guard current == character else { throw fail("expected \(what)") }
        index += 1
    }

    mutating func localDateTime() throws(StatisticsBucketError) -> LocalDateTime {
        let year = try number(digits: 4, "year")
        try expect("-", "'-' after the year")
        let month = try number(digits: 2, "month")
        try expect("-", "'-' after the month")
        let day = try number(digits: 2, "day")
        guard current == "T" else { return try LocalDateTime(year: year, month: month, day: day) }
        index += 1
        let hour = try number(digits: 2, "hour")
        try expect(":", "':' after the hour")
        let minute = try number(digits: 2, "minute")
        var second = 0
        var millisecond = 0
        if current == ":" {
            index += 1
            second = try number(digits: 2, "second")
            if current == "." {
                index += 1
                var digits = 0
                while let character = current, character.isASCII, let digit = character.wholeNumberValue {
                    guard digits < 3 else { throw fail("times are whole milliseconds; too many fraction digits") }
                    millisecond = millisecond * 10 + digit
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { throw fail("expected fraction digits after '.'") }
                for _ in digits..<3 { millisecond *= 10 }
            }
        }
        return try LocalDateTime(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, millisecond: millisecond)
    }

    mutating func offsetSeconds() throws(StatisticsBucketError) -> Int {
        if current == "Z" {
            index += 1
            return 0
        }
        guard let sign = current, sign == "+" || sign == "-" else { throw fail("expected 'Z', '+HH:MM' or '-HH:MM'") }
        index += 1
        let hours = try number(digits: 2, "offset hours")
        try expect(":", "':' in the offset")
        let minutes = try number(digits: 2, "offset minutes")
        guard hours <= 23, minutes <= 59 else { throw fail("the offset must be below 24:00") }
        let seconds = hours * 3600 + minutes * 60
        return sign == "-" ? -seconds : seconds
    }
}
