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
