public import GATT
public import Health

/// Maps notification timestamps to sample instants: the wall clock read once (at the first timestamp), then the
/// monotonic clock from there. A wall-clock step (NTP, a user setting the date) therefore neither reorders samples
/// nor opens a gap; the service logs the drift instead (``drift(at:)``). A trace replays through the same mapping,
/// so replaying it twice gives the same instants.
public struct Timeline: Hashable, Sendable {
    private var anchor: Timestamp?

    public init(anchor: Timestamp? = nil) {
        self.anchor = anchor
    }

    /// The instant of `timestamp` (anchoring the timeline at the first call).
    public mutating func instant(of timestamp: Timestamp) -> Instant {
        let anchor = self.anchor ?? timestamp
        self.anchor = anchor
        let wall = Self.wall(anchor, plus: timestamp.monotonic - anchor.monotonic)
        return Instant(milliseconds: wall >= 0 ? wall / 1000 : (wall + 1) / 1000 - 1)  // floor, without overflow
    }

    /// `anchor`'s wall clock plus `elapsed`, in microseconds, saturating at the ends of `Int64`: the times come
    /// from outside (a trace checks its own, Sources/Traces/TraceLineCodec.swift; a live clock may be anything),
    /// and an instant beyond the store's range is refused by the store, not a trap here.
    static func wall(_ anchor: Timestamp, plus elapsed: Duration) -> Int64 {
        // Whole microseconds, toward zero, from the attoseconds at once (`components` divides by 10^18 and was a
        // tenth of building a replay's samples).
        let whole = elapsed.attoseconds / 1_000_000_000_000
        guard let microseconds = Int64(exactly: whole) else { return whole < 0 ? .min : .max }
        let (wall, beyond) = anchor.wallMicroseconds.addingReportingOverflow(microseconds)
        guard !beyond else { return microseconds < 0 ? .min : .max }
        return wall
    }

    /// How far the wall clock in `timestamp` is from the timeline's instant for it, in milliseconds.
    public func drift(at timestamp: Timestamp) -> Int64 {
        guard let anchor else { return 0 }
        let expected = Self.wall(anchor, plus: timestamp.monotonic - anchor.monotonic)
        let (drift, overflow) = timestamp.wallMicroseconds.subtractingReportingOverflow(expected)
        guard !overflow else { return expected > 0 ? .min / 1000 : .max / 1000 }
        return drift / 1000
    }
}
