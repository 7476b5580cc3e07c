/// SplitMix64 (Steele, Lea, Flood 2014), the generator behind every simulated value: the same seed gives the
/// same bytes on every run and every machine.
struct SeededGenerator: RandomNumberGenerator, Hashable, Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in `range`, from the top 53 bits of the next value.
    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        let unit = Double(next() >> 11) * 0x1p-53
        return range.lowerBound + unit * (range.upperBound - range.lowerBound)
    }
}

/// Conversions between `Duration` and the units the simulation counts in.
enum SimulationTime {
    /// 1e18 / 1024: attoseconds in one RR tick.
    private static let attosecondsPerTick: Int64 = 976_562_500_000_000

    /// `duration` in 1/1024 s, rounded down.
    static func ticks(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1024 + attoseconds / attosecondsPerTick
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
