internal import Foundation
internal import GATT
public import Health

/// A health device's clock found off when it connected: its Current Time (0x2A2B) read against the gateway's
/// wall clock. Scales, cuffs, thermometers and glucose meters stamp what they measure with that clock, often
/// long before they deliver it (a clock reset to 2000 by a battery change, or one that drifted).
///
/// A stamp taken with the wrong clock is moved back by ``offset`` and keeps the stamp and the offset in metadata
/// (`deviceTimeStamp`, `deviceClockOffset`). When the gateway set the device's clock (the characteristic is
/// writable), the stamps taken afterwards are right: a stamp is taken as one of the old clock when, corrected, it
/// lies at or before the moment the clock was set (give or take ``slack``). That is exact for a clock that was behind; for one that was
/// ahead, a reading taken within ``offset`` after the setting is ambiguous and is taken as an old one.
public struct DeviceClockCorrection: Hashable, Sendable {
    /// The device's clock minus the gateway's when it was read.
    public var offset: Duration
    /// When the gateway set the device's clock (the wall time written), if it did.
    public var setAt: Instant?

    /// How far after the setting a corrected stamp may lie and still be the old clock's: stamps are whole
    /// seconds, and the clock is read and set a moment apart. A stamp of the new clock, corrected, lies at least
    /// the tolerance (minutes) after the setting when the clock was behind.
    static let slack: Duration = .seconds(2)

    /// The largest offset taken as a clock error (a hundred years); anything beyond is a device's nonsense.
    public static let maximumOffset: Duration = .seconds(100 * 366 * 86_400)

    public init(offset: Duration, setAt: Instant? = nil) {
        self.offset = offset
        self.setAt = setAt
    }

    /// The instant a stamp read as `instant` names on the gateway's clock; `nil` when it was taken after the
    /// gateway set the clock (it is right as it is) or the correction would leave the store's range.
    func corrected(_ instant: Instant) -> Instant? {
        let (shifted, overflow) = instant.milliseconds.subtractingReportingOverflow(offset.wholeMilliseconds)
        guard !overflow, Instant.supportedMilliseconds.contains(shifted) else { return nil }
        if let setAt, shifted > setAt.milliseconds + Self.slack.wholeMilliseconds { return nil }
        return Instant(milliseconds: shifted)
    }

    /// What a Current Time read at `readAt` says: a correction when the device's clock is off by more than
    /// `tolerance` (its local wall time read in `timeZone`), else `nil`. A time that names no instant (an
    /// incomplete or impossible date) is not a clock reading: `nil` too.
    static func reading(
        _ time: CurrentTime, at readAt: Instant, in timeZone: TimeZone, tolerance: Duration
    ) -> DeviceClockCorrection? {
        guard time.dateTime.isComplete, let device = DeviceClockCorrection.instant(time.dateTime, in: timeZone) else {
            return nil
        }
        var milliseconds = device.milliseconds + Int64(time.fractions256) * 1000 / 256 - readAt.milliseconds
        // A clock that gives no fractions ticks in whole seconds: so does its error.
        if time.fractions256 == 0 { milliseconds = (milliseconds + (milliseconds < 0 ? -500 : 500)) / 1000 * 1000 }
        let offset = Duration.milliseconds(milliseconds)
        guard offset > tolerance || offset < .zero - tolerance, offset <= maximumOffset, offset >= .zero - maximumOffset
        else { return nil }
        return DeviceClockCorrection(offset: offset)
    }

    /// The instant a device's local wall-clock time names in `timeZone` (for a time a DST change makes ambiguous
    /// or skips, the one Foundation's calendar picks; the stamp has no offset to decide by).
    static func instant(_ stamp: DateTime, in timeZone: TimeZone) -> Instant? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(
            year: Int(stamp.year), month: Int(stamp.month), day: Int(stamp.day), hour: Int(stamp.hours),
            minute: Int(stamp.minutes), second: Int(stamp.seconds))
        guard let date = calendar.date(from: components) else { return nil }
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        guard Instant.supportedMilliseconds.contains(milliseconds) else { return nil }
        return Instant(milliseconds: milliseconds)
    }

    /// `instant` as a Current Time value in `timeZone`, to write to a device whose clock is off: the reason is
    /// an update from an external reference (the gateway's clock). `nil` outside the years a Date Time holds.
    static func currentTime(at instant: Instant, in timeZone: TimeZone) -> CurrentTime? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let date = Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        guard let year = parts.year, (1582...9999).contains(year), let month = parts.month, let day = parts.day,
            let hour = parts.hour, let minute = parts.minute, let second = parts.second, let weekday = parts.weekday
        else { return nil }
        let fraction = ((instant.milliseconds % 1000) + 1000) % 1000
        return CurrentTime(
            dateTime: DateTime(
                year: UInt16(year), month: UInt8(month), day: UInt8(day), hours: UInt8(hour), minutes: UInt8(minute),
                seconds: UInt8(second)),
            // Foundation counts Sunday as 1; the characteristic counts Monday as 1 and Sunday as 7.
            dayOfWeek: UInt8((weekday + 5) % 7 + 1), fractions256: UInt8(fraction * 256 / 1000),
            adjustReason: .externalReferenceTimeUpdate)
    }
}
