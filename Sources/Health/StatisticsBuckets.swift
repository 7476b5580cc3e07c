public import Foundation

/// The length of the buckets of a statistics collection (`docs/store-semantics.md`, item 17).
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

/// A time in a statistics query: an instant when written with an offset, else a wall time in the query's zone
/// (`docs/store-semantics.md`, item 19).
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

/// The buckets of a statistics collection: an interval, an anchor and an IANA time zone (`docs/store-semantics.md`,
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
