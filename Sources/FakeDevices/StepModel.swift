internal import Support

/// Walking steps over time: a seeded cadence curve (steps per minute, idle when it dips below zero)
/// integrated second by second. Shared by the PAMS step counter and the InfiniTime watch.
struct StepModel: Hashable, Sendable {
    private let curve: SmoothCurve
    private var second = 0
    private(set) var steps: Double = 0

    init(generator: inout SplitMix64) {
        curve = SmoothCurve(generator: &generator, base: 60, amplitude: 110, periods: [300, 80, 25], range: -200...140)
    }

    /// Counts the steps taken up to `time`, whole seconds at a time.
    mutating func run(to time: Duration) {
        let target = time.components.seconds
        while Int64(second) < target {
            steps += max(0, curve.value(at: Double(second))) / 60
            second += 1
        }
    }

    /// The whole steps taken so far.
    var count: UInt32 { UInt32(steps) }
}
