import Foundation
import Health
import Support
import TestSupport
import Testing

@Suite struct StatisticsBucketsTests {
    // MARK: Helpers

    private func instant(_ text: String) throws -> Instant {
        guard case .instant(let instant) = try StatisticsTime(parsing: text) else {
            throw StatisticsBucketError.invalidTime(text, reason: "the test needs an offset")
        }
        return instant
    }

    private func local(_ text: String) throws -> StatisticsTime {
        .local(try LocalDateTime(parsing: text))
    }

    private func buckets(
        _ interval: String, in zone: String, anchor: StatisticsTime = .defaultAnchor, from: String, to: String
    ) throws -> [StatisticsBucket] {
        let buckets = try StatisticsBuckets(
            interval: StatisticsInterval(parsing: interval), anchor: anchor, timeZoneIdentifier: zone)
        return try buckets.buckets(from: StatisticsTime(parsing: from), to: StatisticsTime(parsing: to))
    }

    /// Buckets follow each other without gaps or overlaps, and none is empty.
    private func expectContiguous(_ buckets: [StatisticsBucket], sourceLocation: SourceLocation = #_sourceLocation) {
        for (a, b) in zip(buckets, buckets.dropFirst()) {
            #expect(a.end == b.start, sourceLocation: sourceLocation)
        }
        for bucket in buckets {
            #expect(bucket.start < bucket.end, sourceLocation: sourceLocation)
        }
    }

    // MARK: Environment

    @Test func foundationKnowsTheZonesWeNeed() throws {
        for identifier in [
            "Europe/Berlin", "America/New_York", "America/Santiago", "Pacific/Apia",
            "Australia/Lord_Howe", "Asia/Kathmandu", "UTC",
        ] {
            #expect(TimeZone(identifier: identifier) != nil, "\(identifier)")
        }
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        #expect(StatisticsBuckets.offsetSeconds(at: try instant("2025-01-15T12:00:00Z"), in: berlin) == 3600)
        #expect(StatisticsBuckets.offsetSeconds(at: try instant("2025-07-15T12:00:00Z"), in: berlin) == 7200)
    }

    // MARK: Days across DST

    @Test func berlinSpringForwardDayLasts23Hours() throws {
        let days = try buckets("1d", in: "Europe/Berlin", from: "2025-03-29T00:00", to: "2025-04-01T00:00")
        #expect(days.map(\.durationSeconds) == [86_400, 82_800, 86_400])
        expectContiguous(days)
        #expect(days[1].start == (try instant("2025-03-30T00:00:00+01:00")))
        #expect(days[1].end == (try instant("2025-03-31T00:00:00+02:00")))
        #expect(days[1].startOffsetSeconds == 3600)
        #expect(days[1].endOffsetSeconds == 7200)
        #expect(days[1].localStart == (try LocalDateTime(parsing: "2025-03-30T00:00")))
        #expect(days[1].description == "2025-03-30T00:00:00+01:00 ..< 2025-03-31T00:00:00+02:00 (82800.0 s)")
    }

    @Test func berlinFallBackDayLasts25Hours() throws {
        let days = try buckets("1d", in: "Europe/Berlin", from: "2025-10-26T00:00", to: "2025-10-27T00:00")
        #expect(days.count == 1)
        #expect(days[0].durationSeconds == 90_000)
        #expect(days[0].start == (try instant("2025-10-26T00:00:00+02:00")))
        #expect(days[0].end == (try instant("2025-10-27T00:00:00+01:00")))
    }

    @Test func newYorkDSTDays() throws {
        let spring = try buckets("1d", in: "America/New_York", from: "2025-03-09T00:00", to: "2025-03-10T00:00")
        #expect(spring.map(\.durationSeconds) == [82_800])
        #expect(spring[0].start == (try instant("2025-03-09T00:00:00-05:00")))
        #expect(spring[0].endOffsetSeconds == -4 * 3600)
        let fall = try buckets("1d", in: "America/New_York", from: "2025-11-02T00:00", to: "2025-11-03T00:00")
        #expect(fall.map(\.durationSeconds) == [90_000])
        #expect(fall[0].end == (try instant("2025-11-03T00:00:00-05:00")))
    }

    // MARK: Fixed durations

    @Test func hourlyBucketsAcrossA25HourDay() throws {
        let hours = try buckets("1h", in: "Europe/Berlin", from: "2025-10-26T00:00", to: "2025-10-27T00:00")
        #expect(hours.count == 25)
        #expect(hours.allSatisfy { $0.durationSeconds == 3600 })
        expectContiguous(hours)
        #expect(hours.map(\.startOffsetSeconds).prefix(3) == [7200, 7200, 7200])
        #expect(hours.map(\.startOffsetSeconds).dropFirst(3).allSatisfy { $0 == 3600 })
        // 02:00 local comes twice: once in CEST, once in CET.
        #expect(hours.filter { $0.localStart.hour == 2 }.count == 2)
    }

    @Test func hourlyBucketsAcrossA23HourDay() throws {
        let hours = try buckets("1h", in: "America/New_York", from: "2025-03-09T00:00", to: "2025-03-10T00:00")
        #expect(hours.count == 23)
        #expect(!hours.contains { $0.localStart.hour == 2 })
        expectContiguous(hours)
    }

    @Test func fifteenMinuteBucketsIncludePartialEnds() throws {
        let quarters = try buckets("15m", in: "UTC", from: "2025-05-01T10:07:00Z", to: "2025-05-01T11:02:00Z")
        #expect(quarters.count == 5)
        #expect(quarters.first?.start == (try instant("2025-05-01T10:00:00Z")))
        #expect(quarters.last?.end == (try instant("2025-05-01T11:15:00Z")))
        #expect(quarters.allSatisfy { $0.durationSeconds == 900 })
        expectContiguous(quarters)
    }

    @Test func fiveMinuteBucketsFollowLocalQuarterHoursInAQuarterHourZone() throws {
        // Kathmandu is UTC+05:45; the default anchor is local midnight, so borders sit on local 5-minute marks.
        let fives = try buckets("5m", in: "Asia/Kathmandu", from: "2025-05-01T10:02", to: "2025-05-01T10:20")
        #expect(fives.map { $0.localStart.minute } == [0, 5, 10, 15])
        #expect(fives.allSatisfy { $0.startOffsetSeconds == 20_700 })
    }

    @Test func rangeEndOnABorderExcludesTheNextBucket() throws {
        let hours = try buckets("1h", in: "UTC", from: "2025-05-01T10:00:00Z", to: "2025-05-01T12:00:00Z")
        #expect(hours.count == 2)
        #expect(hours[1].contains(try instant("2025-05-01T11:00:00Z")))
        #expect(!hours[0].contains(try instant("2025-05-01T11:00:00Z")))
    }

    @Test func anchorInstantShiftsFixedBorders() throws {
        let anchored = try StatisticsBuckets(
            interval: StatisticsInterval(1, .hours), anchor: .instant(try instant("2025-05-01T00:30:00Z")))
        let hours = try anchored.buckets(
            from: try instant("2025-05-01T10:00:00Z"), to: try instant("2025-05-01T11:00:00Z"))
        #expect(hours.map(\.start) == [try instant("2025-05-01T09:30:00Z"), try instant("2025-05-01T10:30:00Z")])
    }

    // MARK: Weeks

    @Test func weeksStartMonday() throws {
        let weeks = try buckets("1w", in: "UTC", from: "2025-03-05T00:00", to: "2025-03-20T00:00")
        #expect(weeks.map(\.localStart.weekday) == [1, 1, 1])
        #expect(weeks.first?.localStart == (try LocalDateTime(parsing: "2025-03-03")))
        #expect(weeks.allSatisfy { $0.durationSeconds == 7 * 86_400 })
        // The Berlin week holding the spring-forward day lasts 167 hours.
        let berlin = try buckets("1w", in: "Europe/Berlin", from: "2025-03-26T12:00", to: "2025-03-27T00:00")
        #expect(berlin.map(\.durationSeconds) == [167 * 3600])
        #expect(berlin.first?.localStart == (try LocalDateTime(parsing: "2025-03-24")))
    }

    @Test func twoWeekBucketsCountFromTheAnchor() throws {
        let fortnights = try buckets(
            "2w", in: "UTC", anchor: try local("2025-01-06T00:00"), from: "2025-01-20T00:00", to: "2025-02-04T00:00")
        #expect(
            fortnights.map(\.localStart) == [
                try LocalDateTime(parsing: "2025-01-20"), try LocalDateTime(parsing: "2025-02-03"),
            ])
    }

    @Test(arguments: ["2025-03-05T00:00", "2025-03-03T06:00", "2025-03-09T00:00", "2025-03-03T00:00:00.001"])
    func weeklyAnchorMustBeMondayMidnight(anchor: String) throws {
        let local = try LocalDateTime(parsing: anchor)
        #expect(throws: StatisticsBucketError.weeklyAnchorNotMondayMidnight(local)) {
            try StatisticsBuckets(interval: StatisticsInterval(1, .weeks), anchor: .local(local))
        }
    }

    @Test func weeklyAnchorMessage() {
        let error = #expect(throws: StatisticsBucketError.self) {
            try StatisticsBuckets(
                interval: StatisticsInterval(1, .weeks), anchor: .local(LocalDateTime(parsing: "2025-03-05")))
        }
        #expect(
            error?.description
                == "a weekly anchor must be a Monday 00:00 local time, got 2025-03-05T00:00:00 (Wednesday)")
    }

    @Test func weeklyAnchorInstantIsReadInTheZone() throws {
        // Monday 00:00 in Berlin is Sunday 23:00 UTC: fine in Berlin, an error in UTC.
        let anchor = StatisticsTime.instant(try instant("2025-03-02T23:00:00Z"))
        _ = try StatisticsBuckets(
            interval: StatisticsInterval(1, .weeks), anchor: anchor, timeZoneIdentifier: "Europe/Berlin")
        #expect(throws: StatisticsBucketError.self) {
            try StatisticsBuckets(interval: StatisticsInterval(1, .weeks), anchor: anchor)
        }
    }

    // MARK: Compatible resolution

    @Test func skippedWallTimesMoveForwardByTheGap() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let skipped = try LocalDateTime(parsing: "2025-03-30T02:30")
        #expect(StatisticsBuckets.instant(for: skipped, in: berlin) == (try instant("2025-03-30T03:30:00+02:00")))
        let santiago = try #require(TimeZone(identifier: "America/Santiago"))
        let midnight = try LocalDateTime(parsing: "2024-09-08T00:00")
        #expect(StatisticsBuckets.instant(for: midnight, in: santiago) == (try instant("2024-09-08T01:00:00-03:00")))
    }

    @Test func repeatedWallTimesTakeTheFirstOccurrence() throws {
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let repeated = try LocalDateTime(parsing: "2025-10-26T02:30")
        #expect(StatisticsBuckets.instant(for: repeated, in: berlin) == (try instant("2025-10-26T02:30:00+02:00")))
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let oneThirty = try LocalDateTime(parsing: "2025-11-02T01:30")
        #expect(StatisticsBuckets.instant(for: oneThirty, in: newYork) == (try instant("2025-11-02T01:30:00-04:00")))
    }

    @Test func santiagosMissingMidnight() throws {
        let days = try buckets("1d", in: "America/Santiago", from: "2024-09-07T00:00", to: "2024-09-09T00:00")
        #expect(days.count == 2)
        expectContiguous(days)
        #expect(days[0].start == (try instant("2024-09-07T00:00:00-04:00")))
        #expect(days[1].start == (try instant("2024-09-08T01:00:00-03:00")))
        #expect(days[1].localStart == (try LocalDateTime(parsing: "2024-09-08T01:00")))
        #expect(days[1].end == (try instant("2024-09-09T00:00:00-03:00")))
        // Saturday keeps 24 real hours (00:00 -04 to 01:00 -03); Sunday has 23.
        #expect(days.map(\.durationSeconds) == [86_400, 82_800])
    }

    @Test func dailyAnchorInsideTheGap() throws {
        // Days from 02:30 local: the 30 March border moves to 03:30 CEST, the others stay at 02:30.
        let days = try buckets(
            "1d", in: "Europe/Berlin", anchor: try local("2000-01-03T02:30"), from: "2025-03-29T12:00",
            to: "2025-03-31T12:00")
        #expect(
            days.map(\.localStart.description) == ["2025-03-29T02:30:00", "2025-03-30T03:30:00", "2025-03-31T02:30:00"])
        #expect(days.map(\.durationSeconds) == [86_400, 82_800, 86_400])
        // And from 02:30 in autumn: the repeated 02:30 resolves to its first (CEST) occurrence.
        let autumn = try buckets(
            "1d", in: "Europe/Berlin", anchor: try local("2000-01-03T02:30"), from: "2025-10-26T12:00",
            to: "2025-10-26T13:00")
        #expect(autumn.first?.start == (try instant("2025-10-26T02:30:00+02:00")))
        #expect(autumn.first?.durationSeconds == 90_000)
    }

    @Test func samoasSkippedDayLeavesNoEmptyBucket() throws {
        let days = try buckets("1d", in: "Pacific/Apia", from: "2011-12-29T00:00", to: "2012-01-01T00:00")
        expectContiguous(days)
        #expect(days.map(\.localStart.day) == [29, 31])
        #expect(days.map(\.durationSeconds) == [86_400, 86_400])
    }

    // MARK: Ranges, defaults, errors

    @Test func unalignedRangesIncludePartialBuckets() throws {
        let days = try buckets("1d", in: "UTC", from: "2025-01-01T12:00:00Z", to: "2025-01-03T01:00:00Z")
        #expect(days.map(\.localStart.day) == [1, 2, 3])
        #expect(days.first?.start == (try instant("2025-01-01T00:00:00Z")))
        #expect(days.last?.end == (try instant("2025-01-04T00:00:00Z")))
    }

    @Test func utcIsTheDefaultZone() throws {
        let daily = try StatisticsBuckets(interval: StatisticsInterval(1, .days))
        #expect(daily.timeZone.secondsFromGMT() == 0)
        #expect(daily.anchorLocal == (try LocalDateTime(parsing: "2000-01-03")))
        #expect(daily.anchor == (try instant("2000-01-03T00:00:00Z")))
        let days = try daily.buckets(from: try local("2025-06-01T00:00"), to: try local("2025-06-03T00:00"))
        #expect(days.map(\.start) == [try instant("2025-06-01T00:00:00Z"), try instant("2025-06-02T00:00:00Z")])
        #expect(days.allSatisfy { $0.startOffsetSeconds == 0 && $0.endOffsetSeconds == 0 })
    }

    @Test func emptyReversedAndOversizedRanges() throws {
        let hourly = try StatisticsBuckets(interval: StatisticsInterval(1, .hours))
        let noon = try instant("2025-01-01T12:00:00Z")
        #expect(try hourly.buckets(from: noon, to: noon).isEmpty)
        #expect(throws: StatisticsBucketError.reversedRange(from: noon.adding(milliseconds: 1), to: noon)) {
            try hourly.buckets(from: noon.adding(milliseconds: 1), to: noon)
        }
        #expect(throws: StatisticsBucketError.tooManyBuckets(limit: 24)) {
            try hourly.buckets(from: noon, to: noon.adding(milliseconds: 25 * 3_600_000), limit: 24)
        }
        #expect(try hourly.buckets(from: noon, to: noon.adding(milliseconds: 24 * 3_600_000), limit: 24).count == 24)
        let daily = try StatisticsBuckets(interval: StatisticsInterval(1, .days))
        #expect(throws: StatisticsBucketError.tooManyBuckets(limit: 3)) {
            try daily.buckets(from: noon, to: noon.adding(milliseconds: 5 * 86_400_000), limit: 3)
        }
    }

    @Test func unknownTimeZoneIsAnError() {
        #expect(throws: StatisticsBucketError.unknownTimeZone("Mars/Olympus_Mons")) {
            try StatisticsBuckets(interval: StatisticsInterval(1, .days), timeZoneIdentifier: "Mars/Olympus_Mons")
        }
    }

    @Test func explicitBorders() throws {
        let borders = [
            try instant("2025-01-01T00:00:00Z"), try instant("2025-01-01T06:00:00Z"),
            try instant("2025-01-02T00:00:00Z"),
        ]
        let buckets = try StatisticsBuckets.buckets(borders: borders)
        #expect(buckets.map(\.durationSeconds) == [21_600, 64_800])
        #expect(throws: StatisticsBucketError.self) { try StatisticsBuckets.buckets(borders: [borders[0]]) }
        #expect(throws: StatisticsBucketError.self) {
            try StatisticsBuckets.buckets(borders: [borders[1], borders[0]])
        }
    }

    // MARK: Intervals and times

    @Test(arguments: [
        ("15m", 15, StatisticsInterval.Unit.minutes), ("5m", 5, .minutes), ("1h", 1, .hours), ("1d", 1, .days),
        ("1w", 1, .weeks), ("90m", 90, .minutes),
    ])
    func parsesShortIntervals(text: String, count: Int, unit: StatisticsInterval.Unit) throws {
        let interval = try StatisticsInterval(parsing: text)
        #expect(interval.count == count)
        #expect(interval.unit == unit)
        #expect(interval.description == text)
        #expect(try StatisticsInterval(component: unit.rawValue, count: count) == interval)
    }

    @Test(arguments: ["", "m", "0m", "-1h", "1.5h", "15x", "15 m", "h1", "99999999999999999999d", "1000001m"])
    func rejectsBadIntervals(text: String) {
        #expect(throws: StatisticsBucketError.self) { try StatisticsInterval(parsing: text) }
    }

    @Test func intervalKinds() throws {
        #expect(try StatisticsInterval(parsing: "15m").fixedMilliseconds == 900_000)
        #expect(try StatisticsInterval(parsing: "2h").fixedMilliseconds == 7_200_000)
        #expect(try StatisticsInterval(parsing: "1d").isCalendar)
        #expect(try StatisticsInterval(parsing: "2w").calendarDays == 14)
        #expect(throws: StatisticsBucketError.self) { try StatisticsInterval(component: "months", count: 1) }
    }

    @Test func parsesQueryTimes() throws {
        #expect(
            try StatisticsTime(parsing: "2025-03-30T02:30")
                == .local(LocalDateTime(year: 2025, month: 3, day: 30, hour: 2, minute: 30)))
        #expect(try StatisticsTime(parsing: "2025-03-30") == .local(LocalDateTime(year: 2025, month: 3, day: 30)))
        #expect(try StatisticsTime(parsing: "1970-01-01T00:00:01.5Z") == .instant(Instant(milliseconds: 1500)))
        #expect(try StatisticsTime(parsing: "1970-01-01T02:00:00+02:00") == .instant(Instant(milliseconds: 0)))
        #expect(try StatisticsTime(parsing: "1969-12-31T19:00:00-05:00") == .instant(Instant(milliseconds: 0)))
        for bad in [
            "2025-02-30", "2025-13-01", "2025-03-30T24:00", "2025-03-30T02:30:00.0001", "2025-03-30 02:30",
            "2025-3-30", "2025-03-30T02:30+2", "2025-03-30T02:30:00Zjunk", "0000-01-01",
        ] {
            #expect(throws: StatisticsBucketError.self, "\(bad)") { try StatisticsTime(parsing: bad) }
        }
        #expect(throws: StatisticsBucketError.self) { try LocalDateTime(parsing: "2025-03-30T02:30:00Z") }
    }

    @Test func localDateTimeCalendarArithmetic() throws {
        #expect(try LocalDateTime(parsing: "2000-01-03").weekday == 1)
        #expect(try LocalDateTime(parsing: "1970-01-01").weekday == 4)
        #expect(try LocalDateTime(parsing: "2024-02-29").weekday == 4)
        #expect(try LocalDateTime(parsing: "0001-01-01").weekday == 1)
        #expect(
            try LocalDateTime(parsing: "2024-02-28T10:00").adding(days: 1) == LocalDateTime(parsing: "2024-02-29T10:00")
        )
        #expect(try LocalDateTime(parsing: "2023-02-28").adding(days: 1) == LocalDateTime(parsing: "2023-03-01"))
        #expect(try LocalDateTime(parsing: "2000-01-03").adding(days: -1) == LocalDateTime(parsing: "2000-01-02"))
        #expect(throws: StatisticsBucketError.self) { try LocalDateTime(parsing: "9999-12-31").adding(days: 1) }
        #expect(try LocalDateTime(parsing: "2025-03-30T02:30:00.250").description == "2025-03-30T02:30:00.250")
    }

    // MARK: Properties

    @Test func randomRangesGiveContiguousCoveringBuckets() throws {
        let zones = [
            "UTC", "Europe/Berlin", "America/New_York", "America/Santiago", "Australia/Lord_Howe",
            "Asia/Kathmandu", "Pacific/Apia",
        ]
        let intervals = ["15m", "1h", "3h", "1d", "2d", "1w"]
        var random = SplitMix64(seed: 0xB0C4E7)
        let start2010 = try instant("2010-01-01T00:00:00Z").milliseconds
        for _ in 0..<300 {
            let zone = random.pick(zones)
            let interval = try StatisticsInterval(parsing: random.pick(intervals))
            let from = Instant(milliseconds: start2010 + Int64(random.next() % (16 * 365 * 86_400_000)))
            let longest: UInt64 = interval.isCalendar ? 40 * 86_400_000 : 3 * 86_400_000
            let span = Int64(random.next() % longest) + 1
            let to = from.adding(milliseconds: span)
            let buckets = try StatisticsBuckets(interval: interval, timeZoneIdentifier: zone).buckets(
                from: from, to: to)
            let context = Comment(rawValue: "\(interval) in \(zone) from \(from) to \(to)")
            #expect(!buckets.isEmpty, context)
            expectContiguous(buckets)
            #expect(buckets.first.map { $0.start <= from && from < $0.end } == true, context)
            #expect(buckets.last.map { $0.start < to && to <= $0.end } == true, context)
            if let length = interval.fixedMilliseconds {
                #expect(buckets.allSatisfy { $0.durationMilliseconds == length }, context)
            } else if interval.unit == .days, interval.count == 1, zone != "Pacific/Apia" {
                // 23, 23.5, 24, 24.5 or 25 hours.
                #expect(buckets.allSatisfy { (82_800_000...90_000_000).contains($0.durationMilliseconds) }, context)
            }
            for bucket in buckets {
                #expect(
                    bucket.localStart
                        == (try StatisticsBuckets.localTime(at: bucket.start, in: TimeZone(identifier: zone) ?? .gmt)))
            }
        }
    }
}
