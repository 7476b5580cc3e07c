import GATT
import Gateway
import Health
import Testing

/// Sample instants from notification timestamps, at the ends of `Int64`.
@Suite struct TimelineTests {
    @Test func instantsFollowTheMonotonicClockFromTheFirstWallReading() {
        var timeline = Timeline()
        #expect(
            timeline.instant(of: Timestamp(monotonic: .seconds(5), wallMicroseconds: 1_000_500)).milliseconds == 1_000)
        // The wall clock stepped back an hour: the instant follows the monotonic clock.
        let later = Timestamp(monotonic: .seconds(6), wallMicroseconds: 1_000_500 - 3_600_000_000)
        #expect(timeline.instant(of: later).milliseconds == 2_000)
        #expect(timeline.drift(at: later) == -3_601_000)
        var before = Timeline()
        #expect(before.instant(of: Timestamp(monotonic: .zero, wallMicroseconds: -1)).milliseconds == -1)
    }

    @Test(arguments: [Int64.max, Int64.min])
    func wallClocksAtTheEndsSaturateInsteadOfTrapping(_ wall: Int64) {
        var timeline = Timeline()
        _ = timeline.instant(of: Timestamp(monotonic: .zero, wallMicroseconds: wall))
        let forward = timeline.instant(of: Timestamp(monotonic: .seconds(10), wallMicroseconds: wall))
        let backward = timeline.instant(of: Timestamp(monotonic: .seconds(-10), wallMicroseconds: wall))
        #expect(forward.milliseconds == (wall == .max ? Int64.max / 1000 : (wall + 10_000_000) / 1000 - 1))
        #expect(backward.milliseconds == (wall == .min ? Int64.min / 1000 - 1 : (wall - 10_000_000) / 1000))
        _ = timeline.drift(at: Timestamp(monotonic: .seconds(10), wallMicroseconds: wall == .max ? .min : .max))
        var far = Timeline()
        _ = far.instant(of: Timestamp(monotonic: .seconds(Int64.min / 2), wallMicroseconds: wall))
        _ = far.instant(of: Timestamp(monotonic: .seconds(Int64.max / 2), wallMicroseconds: wall))
        _ = far.drift(at: Timestamp(monotonic: .seconds(Int64.max / 2), wallMicroseconds: 0))
    }
}
