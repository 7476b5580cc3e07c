internal import Glibc

/// Where the gateway, the writer and the sessions read the time and wait: the system's clocks in the service, a
/// ``ManualClock`` in tests, so that a test moves time itself instead of sleeping to order events.
///
/// Two readings at one moment: ``now`` is monotonic (for ordering, timeouts and intervals; immune to clock steps)
/// and ``wallMicroseconds`` is the real-time clock (what samples are stamped with).
///
/// ```swift
/// let clock: any Clock = SystemClock()
/// let deadline = clock.now + .seconds(2)
/// try await clock.sleep(until: deadline)
/// ```
public protocol Clock: Sendable {
    /// Monotonic time since an arbitrary fixed start (the boot, the test's start).
    var now: Duration { get }
    /// The wall clock: microseconds since 1970-01-01T00:00:00Z.
    var wallMicroseconds: Int64 { get }
    /// Suspends until ``now`` reaches `deadline`; returns at once when it already has.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    func sleep(until deadline: Duration) async throws
}

extension Clock {
    /// Suspends for `duration` of this clock's time.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }

    /// The wall clock in whole milliseconds since the Unix epoch (rounded down).
    public var wallMilliseconds: Int64 {
        let micros = wallMicroseconds
        return micros >= 0 ? micros / 1000 : (micros - 999) / 1000
    }
}

/// The system's clocks: `CLOCK_MONOTONIC` and `CLOCK_REALTIME`; waits on the continuous clock.
public struct SystemClock: Clock {
    public init() {}

    public var now: Duration {
        var reading = timespec()
        clock_gettime(CLOCK_MONOTONIC, &reading)
        return .seconds(reading.tv_sec) + .nanoseconds(reading.tv_nsec)
    }

    public var wallMicroseconds: Int64 {
        var reading = timespec()
        clock_gettime(CLOCK_REALTIME, &reading)
        return Int64(reading.tv_sec) &* 1_000_000 &+ Int64(reading.tv_nsec) / 1000
    }

    public func sleep(until deadline: Duration) async throws {
        let wait = deadline - now
        guard wait > .zero else { return }
        try await ContinuousClock().sleep(for: wait)
    }
}
