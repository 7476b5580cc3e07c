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
        let elapsed = timestamp.monotonic - anchor.monotonic
        let (seconds, attoseconds) = elapsed.components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        let wall = anchor.wallMicroseconds + microseconds
        return Instant(milliseconds: wall >= 0 ? wall / 1000 : (wall - 999) / 1000)
    }

    /// How far the wall clock in `timestamp` is from the timeline's instant for it, in milliseconds.
    public func drift(at timestamp: Timestamp) -> Int64 {
        guard let anchor else { return 0 }
        let elapsed = timestamp.monotonic - anchor.monotonic
        let (seconds, attoseconds) = elapsed.components
        let expected = anchor.wallMicroseconds + seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        return (timestamp.wallMicroseconds - expected) / 1000
    }
}
