public import Support

/// A moment on the UTC timeline, in whole milliseconds since 1970-01-01T00:00:00Z.
///
/// Stores keep milliseconds exactly; sub-millisecond times are rejected at the edges. The UTC offset a person
/// saw at the time is kept beside it in samples (``QuantitySample/startOffsetSeconds``), never folded in.
public struct Instant: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public init(seconds: Int64) {
        self.milliseconds = seconds * 1000
    }

    /// The instants a store accepts and the calendar computes with: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z.
    /// Every time from outside (a sample, a query, a trace) is checked against it before any arithmetic.
    public static let supportedMilliseconds: ClosedRange<Int64> = LocalDateTime.supportedMilliseconds

    /// Whether this instant is in ``supportedMilliseconds``.
    public var isSupported: Bool { Self.supportedMilliseconds.contains(milliseconds) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public func adding(milliseconds delta: Int64) -> Instant { Instant(milliseconds: milliseconds + delta) }

    public var description: String { "\(milliseconds) ms" }
}

extension Instant {
    /// The current wall-clock time.
    public static var now: Instant { now(on: SystemClock()) }

    /// `clock`'s wall time now, in whole milliseconds (rounded down).
    public static func now(on clock: any Clock) -> Instant {
        Instant(milliseconds: clock.wallMilliseconds)
    }
}
