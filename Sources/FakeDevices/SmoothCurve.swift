import Foundation
internal import Support

/// A smooth, seeded signal: a base value plus a few sine waves with seeded amplitudes, periods and phases.
/// Heart rate, running speed and walking cadence all follow one, so values change gradually as real ones do.
struct SmoothCurve: Hashable, Sendable {
    struct Wave: Hashable, Sendable {
        var amplitude: Double
        var period: Double
        var phase: Double
    }

    var base: Double
    var waves: [Wave]
    var range: ClosedRange<Double>

    /// - Parameters:
    ///   - amplitude: the largest swing from `base` all waves together can make, shared in proportion to the periods.
    ///   - periods: rough periods in seconds, one wave each; each is stretched by a seeded factor.
    init(
        generator: inout SplitMix64, base: Double, amplitude: Double, periods: [Double],
        range: ClosedRange<Double>
    ) {
        self.base = base
        self.range = range
        // Shorter waves get smaller amplitudes, so that every wave changes the value about as fast.
        let total = max(1, periods.reduce(0, +))
        waves = periods.map { period in
            Wave(
                amplitude: amplitude * period / total * generator.uniform(0.5...1),
                period: period * generator.uniform(0.8...1.25),
                phase: generator.uniform(0...(2 * Double.pi)))
        }
    }

    /// The value at `seconds` since the peripheral was switched on, within `range`.
    func value(at seconds: Double) -> Double {
        var value = base
        for wave in waves {
            value += wave.amplitude * sin(2 * Double.pi * seconds / wave.period + wave.phase)
        }
        return min(range.upperBound, max(range.lowerBound, value))
    }
}
