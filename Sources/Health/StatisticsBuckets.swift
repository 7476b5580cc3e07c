public import Foundation

/// The length of the buckets of a statistics collection (`store.md` §6 item 17).
///
/// Minutes and hours are **fixed durations** counted from the anchor instant, so a 25-hour day has 25 hourly
/// buckets. Days and weeks are **calendar steps** on the anchor's local wall time, so a daily bucket lasts
/// 23, 24 or 25 hours across daylight-saving changes.
///
/// ```swift
/// let quarterHours = try StatisticsInterval(parsing: "15m")
/// let days = try StatisticsInterval(1, .days)
/// ```
public struct StatisticsInterval: Hashable, Sendable, CustomStringConvertible {
    /// The step unit; the raw values are the component names of a query (`{"minutes": 15}`).
    public enum Unit: String, Hashable, Sendable, CaseIterable {
        case minutes, hours, days, weeks

        /// The one-letter suffix of the short form (`15m`, `1h`, `1d`, `1w`).
        public var suffix: Character {
            switch self {
            case .minutes: "m"
            case .hours: "h"
            case .days: "d"
            case .weeks: "w"
            }
        }
    }

    /// The largest step count accepted; it keeps every border computation far inside `Int64` milliseconds.
    public static let maximumCount = 1_000_000

    /// How many units one bucket spans, at least 1.
    public let count: Int
    public let unit: Unit

    /// `count` units per bucket.
    ///
    /// - Throws: ``StatisticsBucketError/invalidInterval(_:reason:)`` unless `1 <= count <= maximumCount`.
    public init(_ count: Int, _ unit: Unit) throws(StatisticsBucketError) {
        guard count >= 1, count <= StatisticsInterval.maximumCount else {
            throw .invalidInterval(
                "\(count)\(unit.suffix)", reason: "the count must be from 1 to \(StatisticsInterval.maximumCount)")
        }
        self.count = count
        self.unit = unit
    }

    /// The component form of a query: `component` is `minutes`, `hours`, `days` or `weeks`.
    ///
    /// - Throws: ``StatisticsBucketError/invalidInterval(_:reason:)`` for another name or a bad count.
    public init(component: String, count: Int) throws(StatisticsBucketError) {
        guard let unit = Unit(rawValue: component) else {
            throw .invalidInterval(component, reason: "the unit must be minutes, hours, days or weeks")
        }
        try self.init(count, unit)
    }

    /// The short form: a positive decimal count followed by `m`, `h`, `d` or `w` (`15m`, `1h`, `1d`, `1w`).
    ///
    /// - Throws: ``StatisticsBucketError/invalidInterval(_:reason:)``.
    public init(parsing text: String) throws(StatisticsBucketError) {
        guard let suffix = text.last, let unit = Unit.allCases.first(where: { $0.suffix == suffix }) else {
            throw .invalidInterval(text, reason: "expected a count followed by m, h, d or w, as in 15m or 1d")
        }
        let digits = text.dropLast()
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .invalidInterval(text, reason: "expected a count followed by m, h, d or w, as in 15m or 1d")
        }
        guard let count = Int(digits) else {
            throw .invalidInterval(text, reason: "the count must be from 1 to \(StatisticsInterval.maximumCount)")
        }
        try self.init(count, unit)
    }

    /// The short form, e.g. `15m`.
    public var description: String { "\(count)\(unit.suffix)" }

    /// Whether buckets follow the calendar (days, weeks) rather than fixed durations (minutes, hours).
    public var isCalendar: Bool { calendarDays != nil }

    /// The bucket length in milliseconds for minutes and hours; `nil` for calendar steps.
    public var fixedMilliseconds: Int64? {
        switch unit {
        case .minutes: Int64(count) * 60_000
        case .hours: Int64(count) * 3_600_000
        case .days, .weeks: nil
        }
    }

    /// The step in calendar days for days and weeks; `nil` for fixed durations.
    public var calendarDays: Int? {
        switch unit {
        case .minutes, .hours: nil
        case .days: count
        case .weeks: count * 7
        }
    }
}

/// A local wall-clock time without a zone or offset, in the proleptic Gregorian calendar (years 1-9999).
///
/// Statistics queries give `from`, `to` and `anchor` as wall times when they carry no offset
/// (`store.md` §6 item 19); ``StatisticsBuckets/instant(for:in:)`` turns one into an ``Instant`` in a zone.
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
        let text = LocalDateTime.format(year, month, day, hour, minute, second, millisecond)
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
    var naiveMilliseconds: Int64 {
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

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of ``daysFromCivil(_:_:_:)``.
    private static func civilFromDays(_ days: Int64) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
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

/// A time in a statistics query: an instant when written with an offset, else a wall time in the query's zone
/// (`store.md` §6 item 19).
public enum StatisticsTime: Hashable, Sendable, CustomStringConvertible {
    case instant(Instant)
    case local(LocalDateTime)

    /// Parses ISO 8601 as in ``LocalDateTime/init(parsing:)``, optionally followed by `Z` or `±HH:MM`, which
    /// makes it an instant. Sub-millisecond fractions are errors.
    ///
    /// - Throws: ``StatisticsBucketError/invalidTime(_:reason:)``.
    public init(parsing text: String) throws(StatisticsBucketError) {
        var scanner = TimeScanner(text)
        let local = try scanner.localDateTime()
        if scanner.isAtEnd {
            self = .local(local)
            return
        }
        let offsetSeconds = try scanner.offsetSeconds()
        guard scanner.isAtEnd else { throw .invalidTime(text, reason: "unexpected text after the offset") }
        let milliseconds = local.naiveMilliseconds - Int64(offsetSeconds) * 1000
        guard LocalDateTime.supportedMilliseconds.contains(milliseconds) else {
            throw .outOfSupportedRange(text)
        }
        self = .instant(Instant(milliseconds: milliseconds))
    }

    /// The default anchor for every interval: Monday 2000-01-03T00:00 local (item 18).
    public static let defaultAnchor = StatisticsTime.local(LocalDateTime(defaultAnchor: ()))

    public var description: String {
        switch self {
        case .instant(let instant): "\(instant)"
        case .local(let local): "\(local) (local)"
        }
    }
}

extension LocalDateTime {
    /// 2000-01-03T00:00, a Monday, built without validation because the fields are constants.
    fileprivate init(defaultAnchor: Void) {
        self.init(unchecked: 2000, 1, 3, 0, 0, 0, 0)
    }
}

/// One bucket of a statistics collection: `[start, end)` on the UTC timeline, with the zone's offsets.
public struct StatisticsBucket: Hashable, Sendable, CustomStringConvertible {
    public let start: Instant
    public let end: Instant
    /// The zone's UTC offset at `start`, in seconds (local wall time = start + offset).
    public let startOffsetSeconds: Int32
    /// The zone's UTC offset at `end`, in seconds.
    public let endOffsetSeconds: Int32
    /// `start` as local wall time in the zone.
    public let localStart: LocalDateTime
    /// `end` as local wall time in the zone.
    public let localEnd: LocalDateTime

    public init(
        start: Instant, end: Instant, startOffsetSeconds: Int32, endOffsetSeconds: Int32, localStart: LocalDateTime,
        localEnd: LocalDateTime
    ) {
        self.start = start
        self.end = end
        self.startOffsetSeconds = startOffsetSeconds
        self.endOffsetSeconds = endOffsetSeconds
        self.localStart = localStart
        self.localEnd = localEnd
    }

    /// Real elapsed time, `end - start`, in milliseconds.
    public var durationMilliseconds: Int64 { end.milliseconds - start.milliseconds }

    /// Real elapsed time in seconds (82800 for Berlin's 23-hour day); whole unless an anchor has milliseconds.
    public var durationSeconds: Double { Double(durationMilliseconds) / 1000 }

    /// Whether `instant` lies in `[start, end)`: an instant on a border belongs to the later bucket.
    public func contains(_ instant: Instant) -> Bool { start <= instant && instant < end }

    /// `2025-03-30T00:00:00+01:00 ..< 2025-03-31T00:00:00+02:00 (82800 s)`.
    public var description: String {
        "\(StatisticsBuckets.format(localStart, offsetSeconds: startOffsetSeconds)) ..< "
            + "\(StatisticsBuckets.format(localEnd, offsetSeconds: endOffsetSeconds)) (\(durationSeconds) s)"
    }
}

/// Why buckets could not be computed, or a query time, interval or zone was not understood.
public enum StatisticsBucketError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidInterval(String, reason: String)
    case invalidTime(String, reason: String)
    case unknownTimeZone(String)
    /// Weekly buckets need a Monday 00:00 local anchor (item 18).
    case weeklyAnchorNotMondayMidnight(LocalDateTime)
    /// `from` after `to`.
    case reversedRange(from: Instant, to: Instant)
    /// More buckets than the caller's limit.
    case tooManyBuckets(limit: Int)
    /// A time outside the years 1-9999.
    case outOfSupportedRange(String)
    /// Explicit borders that are fewer than two or not strictly increasing.
    case invalidBorders(String)

    public var description: String {
        switch self {
        case .invalidInterval(let text, let reason):
            "invalid interval '\(text)': \(reason)"
        case .invalidTime(let text, let reason):
            "invalid time '\(text)': \(reason)"
        case .unknownTimeZone(let identifier):
            "unknown time zone '\(identifier)'"
        case .weeklyAnchorNotMondayMidnight(let local):
            "a weekly anchor must be a Monday 00:00 local time, got \(local) (\(Self.weekdayNames[local.weekday - 1]))"
        case .reversedRange(let from, let to):
            "the range starts at \(from), after its end \(to)"
        case .tooManyBuckets(let limit):
            "the range needs more than \(limit) buckets"
        case .outOfSupportedRange(let what):
            "\(what) is outside the years 1-9999"
        case .invalidBorders(let reason):
            "invalid bucket borders: \(reason)"
        }
    }

    private static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
}

/// The buckets of a statistics collection: an interval, an anchor and an IANA time zone (`store.md` §6
/// items 17-20).
///
/// - **Minutes and hours** are fixed durations: borders are `anchor + k × length` for every integer `k`, in
///   real time, so a 25-hour day has 25 hourly buckets. In zones whose offset changed by a non-whole number of
///   hours since the anchor (a 30-minute DST shift, Lord Howe), pass an anchor near the range.
/// - **Days and weeks** are calendar steps: borders are the anchor's local wall time plus `k × n` days, each
///   resolved to an instant **compatibly**: a wall time repeated by a fall-back resolves to its first
///   occurrence; one skipped by a spring-forward gap moves forward by the gap (Berlin 2025-03-30 02:30 → 03:30
///   CEST; Santiago's missing midnight on 2024-09-08 → 01:00). Should two borders resolve to the same instant
///   (Samoa skipped all of 2011-12-30), the empty bucket is left out; buckets never overlap and leave no gaps.
/// - **Weeks start Monday**: the anchor must be a Monday 00:00 local.
/// - The default anchor is 2000-01-03T00:00 local (a Monday); the default zone is UTC.
///
/// Offsets come from Foundation's `TimeZone`, whose rules on Linux are the tz database compiled into the
/// toolchain's ICU (`TimeZone.timeZoneDataVersion`), not `/usr/share/zoneinfo`.
///
/// ```swift
/// let days = try StatisticsBuckets(interval: .init(1, .days), timeZoneIdentifier: "Europe/Berlin")
/// let march30 = try days.buckets(
///     from: StatisticsTime(parsing: "2025-03-30T00:00"), to: StatisticsTime(parsing: "2025-03-31T00:00"))
/// march30[0].durationSeconds   // 82800
/// ```
public struct StatisticsBuckets: Sendable {
    /// The default cap on the number of buckets one call returns.
    public static let defaultLimit = 1_000_000

    public let interval: StatisticsInterval
    public let timeZone: TimeZone
    /// The anchor as local wall time in ``timeZone``; calendar borders are counted from it.
    public let anchorLocal: LocalDateTime
    /// The anchor on the timeline; fixed borders are counted from it.
    public let anchor: Instant

    /// Buckets of `interval` anchored at `anchor` in `timeZone`.
    ///
    /// An anchor given as an instant is read as its local wall time for calendar steps.
    ///
    /// - Throws: ``StatisticsBucketError/weeklyAnchorNotMondayMidnight(_:)`` for a weekly interval whose anchor
    ///   is not Monday 00:00 local, ``StatisticsBucketError/outOfSupportedRange(_:)`` for an anchor outside
    ///   the years 1-9999.
    public init(
        interval: StatisticsInterval, anchor: StatisticsTime = .defaultAnchor, timeZone: TimeZone = .gmt
    ) throws(StatisticsBucketError) {
        let anchorLocal: LocalDateTime
        let anchorInstant: Instant
        switch anchor {
        case .instant(let instant):
            anchorLocal = try StatisticsBuckets.localTime(at: instant, in: timeZone)
            anchorInstant = instant
        case .local(let local):
            anchorLocal = local
            anchorInstant = StatisticsBuckets.instant(for: local, in: timeZone)
        }
        if interval.unit == .weeks, anchorLocal.weekday != 1 || !anchorLocal.isMidnight {
            throw .weeklyAnchorNotMondayMidnight(anchorLocal)
        }
        self.interval = interval
        self.timeZone = timeZone
        self.anchorLocal = anchorLocal
        self.anchor = anchorInstant
    }

    /// As ``init(interval:anchor:timeZone:)`` with an IANA zone name such as `Europe/Berlin`.
    ///
    /// - Throws: ``StatisticsBucketError/unknownTimeZone(_:)`` when Foundation does not know the name.
    public init(
        interval: StatisticsInterval, anchor: StatisticsTime = .defaultAnchor, timeZoneIdentifier: String
    ) throws(StatisticsBucketError) {
        guard let zone = TimeZone(identifier: timeZoneIdentifier) else { throw .unknownTimeZone(timeZoneIdentifier) }
        try self.init(interval: interval, anchor: anchor, timeZone: zone)
    }

    /// Every bucket that intersects `[from, to)`, in order and without gaps; partial buckets at either end are
    /// included whole. An empty range gives no buckets.
    ///
    /// - Throws: ``StatisticsBucketError/reversedRange(from:to:)`` when `from > to`,
    ///   ``StatisticsBucketError/tooManyBuckets(limit:)`` past `limit`,
    ///   ``StatisticsBucketError/outOfSupportedRange(_:)`` near the years 1 and 9999.
    public func buckets(from: Instant, to: Instant, limit: Int = defaultLimit) throws(StatisticsBucketError)
        -> [StatisticsBucket]
    {
        guard from <= to else { throw .reversedRange(from: from, to: to) }
        for instant in [from, to] where !LocalDateTime.supportedMilliseconds.contains(instant.milliseconds) {
            throw .outOfSupportedRange("\(instant)")
        }
        guard from < to else { return [] }
        if let length = interval.fixedMilliseconds {
            return try fixedBuckets(from: from, to: to, length: length, limit: limit)
        }
        return try calendarBuckets(from: from, to: to, stepDays: interval.calendarDays ?? 1, limit: limit)
    }

    /// As ``buckets(from:to:limit:)``, with wall times resolved compatibly in ``timeZone``.
    public func buckets(from: StatisticsTime, to: StatisticsTime, limit: Int = defaultLimit)
        throws(StatisticsBucketError) -> [StatisticsBucket]
    {
        try buckets(from: resolve(from), to: resolve(to), limit: limit)
    }

    /// Buckets between explicit borders (item 19's `borders`): `[b0, b1), [b1, b2), ...`.
    ///
    /// - Throws: ``StatisticsBucketError/invalidBorders(_:)`` unless there are at least two strictly increasing
    ///   borders.
    public static func buckets(borders: [Instant], timeZone: TimeZone = .gmt) throws(StatisticsBucketError)
        -> [StatisticsBucket]
    {
        guard borders.count >= 2 else { throw .invalidBorders("at least two are needed, got \(borders.count)") }
        var result: [StatisticsBucket] = []
        result.reserveCapacity(borders.count - 1)
        for (start, end) in zip(borders, borders.dropFirst()) {
            guard start < end else { throw .invalidBorders("\(end) does not come after \(start)") }
            result.append(try bucket(start, end, in: timeZone))
        }
        return result
    }

    // MARK: Time zone arithmetic

    /// The instant a wall time names in `zone`, resolved compatibly: the first occurrence of a repeated wall
    /// time, and a skipped one moved forward by the length of the gap.
    public static func instant(for local: LocalDateTime, in zone: TimeZone) -> Instant {
        let naive = local.naiveMilliseconds
        // Every offset in effect within two days either side; a wall time can only map to one of these.
        var offsets: [Int64] = []
        for hours: Int64 in [-48, -24, 0, 24, 48] {
            let offset = offsetMilliseconds(at: naive + hours * 3_600_000, in: zone)
            if !offsets.contains(offset) { offsets.append(offset) }
        }
        let matches = offsets.map { naive - $0 }.filter { naive - offsetMilliseconds(at: $0, in: zone) == $0 }
        if let first = matches.min() { return Instant(milliseconds: first) }
        // In a gap: use the offset in effect before it, which lands as far past the gap as the wall time was
        // into it.
        let beforeGap = offsetMilliseconds(at: naive - (offsets.max() ?? 0), in: zone)
        return Instant(milliseconds: naive - beforeGap)
    }

    /// The wall time in `zone` at `instant`.
    ///
    /// - Throws: ``StatisticsBucketError/outOfSupportedRange(_:)`` outside the years 1-9999.
    public static func localTime(at instant: Instant, in zone: TimeZone) throws(StatisticsBucketError)
        -> LocalDateTime
    {
        try LocalDateTime(
            naiveMilliseconds: instant.milliseconds + offsetMilliseconds(at: instant.milliseconds, in: zone))
    }

    /// The zone's UTC offset in seconds at `instant`.
    public static func offsetSeconds(at instant: Instant, in zone: TimeZone) -> Int32 {
        Int32(clamping: zone.secondsFromGMT(for: date(instant.milliseconds)))
    }

    private static func offsetMilliseconds(at milliseconds: Int64, in zone: TimeZone) -> Int64 {
        Int64(zone.secondsFromGMT(for: date(milliseconds))) * 1000
    }

    private static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    static func format(_ local: LocalDateTime, offsetSeconds: Int32) -> String {
        let sign = offsetSeconds < 0 ? "-" : "+"
        let magnitude = Int(offsetSeconds.magnitude)
        let hours = magnitude / 3600
        let minutes = magnitude / 60 % 60
        let seconds = magnitude % 60
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let offset = "\(sign)\(pad(hours)):\(pad(minutes))" + (seconds == 0 ? "" : ":\(pad(seconds))")
        return "\(local)\(offset)"
    }

    // MARK: Bucket generation

    private func resolve(_ time: StatisticsTime) -> Instant {
        switch time {
        case .instant(let instant): instant
        case .local(let local): StatisticsBuckets.instant(for: local, in: timeZone)
        }
    }

    private static func bucket(_ start: Instant, _ end: Instant, in zone: TimeZone) throws(StatisticsBucketError)
        -> StatisticsBucket
    {
        StatisticsBucket(
            start: start, end: end, startOffsetSeconds: offsetSeconds(at: start, in: zone),
            endOffsetSeconds: offsetSeconds(at: end, in: zone), localStart: try localTime(at: start, in: zone),
            localEnd: try localTime(at: end, in: zone))
    }

    private func fixedBuckets(from: Instant, to: Instant, length: Int64, limit: Int) throws(StatisticsBucketError)
        -> [StatisticsBucket]
    {
        let first = LocalDateTime.floorDivide(from.milliseconds - anchor.milliseconds, length)
        let last = LocalDateTime.floorDivide(to.milliseconds - 1 - anchor.milliseconds, length)
        guard last - first < Int64(limit) else { throw .tooManyBuckets(limit: limit) }
        var result: [StatisticsBucket] = []
        result.reserveCapacity(Int(last - first + 1))
        for k in first...last {
            let start = anchor.adding(milliseconds: k * length)
            result.append(try StatisticsBuckets.bucket(start, start.adding(milliseconds: length), in: timeZone))
        }
        return result
    }

    private func calendarBorder(_ k: Int64, stepDays: Int) throws(StatisticsBucketError) -> Instant {
        let (days, overflow) = k.multipliedReportingOverflow(by: Int64(stepDays))
        guard !overflow, let offset = Int(exactly: days) else {
            throw .outOfSupportedRange("\(k) steps from the anchor")
        }
        return StatisticsBuckets.instant(for: try anchorLocal.adding(days: offset), in: timeZone)
    }

    private func calendarBuckets(from: Instant, to: Instant, stepDays: Int, limit: Int) throws(StatisticsBucketError)
        -> [StatisticsBucket]
    {
        // Estimate the step holding `from` from the nominal length, then correct for offset changes.
        let nominal = Int64(stepDays) * 86_400_000
        var k = LocalDateTime.floorDivide(from.milliseconds - anchor.milliseconds, nominal)
        while try calendarBorder(k, stepDays: stepDays) > from { k -= 1 }
        while try calendarBorder(k + 1, stepDays: stepDays) <= from { k += 1 }

        var result: [StatisticsBucket] = []
        var start = try calendarBorder(k, stepDays: stepDays)
        while start < to {
            k += 1
            // Borders never run backwards; a border equal to the previous one closes an empty bucket, skipped.
            let end = max(try calendarBorder(k, stepDays: stepDays), start)
            guard end > start else { continue }
            guard result.count < limit else { throw .tooManyBuckets(limit: limit) }
            result.append(try StatisticsBuckets.bucket(start, end, in: timeZone))
            start = end
        }
        return result
    }
}

// MARK: - ISO 8601 scanning

/// Reads the fixed-width ISO 8601 forms `StatisticsTime` and `LocalDateTime` accept.
private struct TimeScanner {
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
