internal import Health

/// A sensor's cumulative counter (energy since reset, total distance, steps today) turned into deltas.
///
/// The first value is only a base. After that each value gives the increase since the previous one, over the
/// interval between them. A smaller value is either a rollover (only for counters that wrap: the old value was in
/// the top sixteenth of the range and the new one in the bottom sixteenth) or a reset, after which the counter
/// counts from zero, so the new value itself is the increase. A counter that saturates (Energy Expended at 0xFFFF)
/// reports the last increase up to the ceiling and then nothing until it is reset.
struct CumulativeCounter: Hashable, Sendable {
    struct Delta: Hashable, Sendable {
        var from: Instant
        var amount: UInt64
        /// The counter went back (a reset) rather than forward.
        var reset: Bool
    }

    /// The counter's width in bits.
    let width: Int
    let saturatesAt: UInt64?
    let rollsOver: Bool
    private(set) var last: UInt64?
    private(set) var lastAt: Instant?

    init(width: Int, saturatesAt: UInt64? = nil, rollsOver: Bool = false) {
        self.width = width
        self.saturatesAt = saturatesAt
        self.rollsOver = rollsOver
    }

    /// Takes `value` measured at `at`; returns the increase since the previous value, or `nil` for the first value
    /// and for repeats at the ceiling.
    mutating func advance(to value: UInt64, at: Instant, resetsFromZero: Bool) -> Delta? {
        defer {
            last = value
            lastAt = at
        }
        guard let last, let lastAt, at >= lastAt else { return nil }
        if let ceiling = saturatesAt, last == ceiling, value == ceiling { return nil }
        if value >= last { return Delta(from: lastAt, amount: value - last, reset: false) }
        let range = UInt64(1) << UInt64(width)
        if rollsOver, last >= range - range / 16, value < range / 16 {
            return Delta(from: lastAt, amount: value + range - last, reset: false)
        }
        return Delta(from: lastAt, amount: resetsFromZero ? value : 0, reset: true)
    }

    /// Starts over from `value` (a new session of the sensor), without a delta.
    mutating func rebase(to value: UInt64, at: Instant) {
        last = value
        lastAt = at
    }
}
