import Foundation
import GATT
import Health
import Testing

@testable import Gateway

/// A health device's clock found off at connect (Sources/Gateway/DeviceClock.swift): when it counts as off, how its
/// stamps are corrected before and after the gateway set it, and the Current Time written to set it.
@Suite struct DeviceClockTests {
    static let utc = TimeZone(identifier: "UTC")!
    /// 2026-11-29T10:00:00Z, a Sunday.
    static let now = Instant(seconds: 1_795_946_400)

    static func time(_ year: UInt16, _ month: UInt8, _ day: UInt8, _ hour: UInt8, _ minute: UInt8, _ second: UInt8)
        -> CurrentTime
    {
        CurrentTime(
            dateTime: DateTime(year: year, month: month, day: day, hours: hour, minutes: minute, seconds: second))
    }

    @Test func aClockWithinTheToleranceIsRightAndOneBeyondItIsOff() throws {
        let tolerance = Duration.seconds(300)
        // Five minutes either way is within it; a whole-second clock's error is rounded to seconds.
        for time in [Self.time(2026, 11, 29, 10, 5, 0), Self.time(2026, 11, 29, 9, 55, 0)] {
            #expect(DeviceClockCorrection.reading(time, at: Self.now, in: Self.utc, tolerance: tolerance) == nil)
        }
        let behind = try #require(
            DeviceClockCorrection.reading(
                Self.time(2026, 11, 29, 9, 0, 0), at: Instant(milliseconds: Self.now.milliseconds + 400),
                in: Self.utc, tolerance: tolerance))
        #expect(behind.offset == .seconds(-3600))
        let reset = try #require(
            DeviceClockCorrection.reading(
                Self.time(2000, 1, 1, 0, 0, 0), at: Self.now, in: Self.utc, tolerance: tolerance))
        #expect(reset.offset == .seconds(946_684_800 - 1_795_946_400))
        // Fractions of a second count when the device gives them.
        var fine = Self.time(2026, 11, 29, 10, 10, 0)
        fine.fractions256 = 128
        let ahead = try #require(
            DeviceClockCorrection.reading(fine, at: Self.now, in: Self.utc, tolerance: tolerance))
        #expect(ahead.offset == .milliseconds(600_500))
        // Read in the device's zone: 11:00 in Paris is 10:00 UTC.
        let paris = TimeZone(identifier: "Europe/Paris")!
        #expect(
            DeviceClockCorrection.reading(
                Self.time(2026, 11, 29, 11, 0, 0), at: Self.now, in: paris, tolerance: tolerance) == nil)
        // A date that names no day is no reading.
        #expect(
            DeviceClockCorrection.reading(
                Self.time(2026, 2, 30, 10, 0, 0), at: Self.now, in: Self.utc, tolerance: tolerance) == nil)
    }

    @Test func stampsBeforeTheSettingAreCorrectedAndLaterOnesKept() {
        let hour: Int64 = 3_600_000
        let now = Self.now.milliseconds
        // Behind by an hour, never set: every stamp moves an hour on.
        let unset = DeviceClockCorrection(offset: .seconds(-3600))
        #expect(unset.corrected(Instant(milliseconds: now - 2 * hour)) == Instant(milliseconds: now - hour))
        #expect(unset.corrected(Instant(milliseconds: now)) == Instant(milliseconds: now + hour))
        // Behind by an hour and set now: old stamps (before now - 1 h) move on; stamps of the new clock stay.
        let set = DeviceClockCorrection(offset: .seconds(-3600), setAt: Self.now)
        #expect(set.corrected(Instant(milliseconds: now - hour - 1)) == Instant(milliseconds: now - 1))
        #expect(set.corrected(Instant(milliseconds: now - hour)) == Self.now)
        // Two seconds of slack: a stamp taken just before the setting, whole seconds and all, is still the old's.
        #expect(set.corrected(Instant(milliseconds: now - hour + 2_000)) == Instant(milliseconds: now + 2_000))
        #expect(set.corrected(Instant(milliseconds: now - hour + 2_001)) == nil)
        #expect(set.corrected(Instant(milliseconds: now)) == nil)
        #expect(set.corrected(Instant(milliseconds: now + 10 * hour)) == nil)
        // Ahead by ten minutes and set now: a stamp within ten minutes after the setting is taken as an old one.
        let ahead = DeviceClockCorrection(offset: .seconds(600), setAt: Self.now)
        #expect(ahead.corrected(Instant(milliseconds: now + 5 * 60_000)) == Instant(milliseconds: now - 5 * 60_000))
        #expect(ahead.corrected(Instant(milliseconds: now + 11 * 60_000)) == nil)
        #expect(ahead.corrected(Instant(milliseconds: now + 10 * 60_000 + 2_001)) == nil)
        // A correction that would leave the store's range is not made.
        let far = DeviceClockCorrection(offset: .seconds(Int64(100 * 365 * 86_400)))
        #expect(far.corrected(Instant(milliseconds: Instant.supportedMilliseconds.lowerBound + 1)) == nil)
    }

    @Test func theTimeWrittenIsTheGatewaysInTheDevicesZone() throws {
        let written = try #require(
            DeviceClockCorrection.currentTime(
                at: Instant(milliseconds: Self.now.milliseconds + 500), in: TimeZone(identifier: "Europe/Paris")!))
        #expect(written.dateTime == DateTime(year: 2026, month: 11, day: 29, hours: 11, minutes: 0, seconds: 0))
        #expect(written.dayOfWeek == 7)  // Sunday
        #expect(written.fractions256 == 128)
        #expect(written.adjustReason == .externalReferenceTimeUpdate)
        let monday = try #require(
            DeviceClockCorrection.currentTime(at: Instant(seconds: 1_795_946_400 + 86_400), in: Self.utc))
        #expect(monday.dayOfWeek == 1)
        #expect(try CurrentTime(decoding: monday.encoded()) == monday)
    }
}
