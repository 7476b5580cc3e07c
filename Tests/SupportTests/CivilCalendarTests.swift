import Foundation
import Support
import Testing

@Suite struct CivilCalendarTests {
    @Test func knownDatesHaveTheirDayNumbers() {
        #expect(CivilCalendar.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilCalendar.days(year: 1969, month: 12, day: 31) == -1)
        #expect(CivilCalendar.days(year: 1, month: 1, day: 1) == -719_162)
        #expect(CivilCalendar.days(year: 9999, month: 12, day: 31) == 2_932_896)
        #expect(CivilCalendar.date(days: 19_782) == (2024, 2, 29))
    }

    /// Every day of three windows (the first and last ten years of the supported range, 1899-2101 with the
    /// centuries' leap rules) is the day after the one before; every 13th day of the whole range round-trips and
    /// every 9,973rd matches Foundation's Gregorian calendar in UTC.
    @Test func daysFollowEachOtherAndRoundTrip() {
        let windows: [ClosedRange<Int64>] = [
            -719_162...(-715_510),
            CivilCalendar.days(
                year: 1899, month: 1, day: 1)...CivilCalendar.days(
                    year: 2101, month: 12, day: 31), 2_929_244...2_932_896,
        ]
        for window in windows {
            var previous = CivilCalendar.date(days: window.lowerBound - 1)
            for days in window {
                let date = CivilCalendar.date(days: days)
                let nextInMonth =
                    date.year == previous.year && date.month == previous.month
                    && date.day == previous.day + 1
                let nextMonth =
                    date.day == 1 && (date.month == previous.month + 1 || (date.month == 1 && previous.month == 12))
                if !(nextInMonth || nextMonth) { Issue.record("day \(days): \(date) after \(previous)") }
                previous = date
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for days in stride(from: Int64(-719_162), through: 2_932_896, by: 13) {
            let date = CivilCalendar.date(days: days)
            if CivilCalendar.days(year: date.year, month: date.month, day: date.day) != days {
                Issue.record("day \(days) gives \(date), which gives another day")
            }
            if days % 9_973 == 0, date.year >= 1600 {
                let reference = calendar.dateComponents(
                    [.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
                #expect(
                    reference.year == Int(date.year) && reference.month == Int(date.month)
                        && reference.day == Int(date.day), "day \(days)")
            }
        }
        #expect(CivilCalendar.date(days: -719_163) == (0, 12, 31))
    }
}
