/// `docs/bluez.md`, R9: exponential backoff with jitter. Attempt `n` waits a random time in `[d/2, d]` where
/// `d = min(maximum, minimum * 2^n)`, so that ten straps that lost the link together do not all retry together.
public struct Backoff: Hashable, Sendable {
    public var minimum: Duration
    public var maximum: Duration
    /// A SplitMix64 state: the jitter is reproducible from a seed (tests) or seeded per sensor (the service).
    private var state: UInt64

    public init(minimum: Duration = .milliseconds(250), maximum: Duration = .seconds(60), seed: UInt64 = 0x5EED) {
        self.minimum = minimum
        self.maximum = max(maximum, minimum)
        self.state = seed
    }

    /// The wait before attempt number `attempt` (0 for the first retry).
    public mutating func delay(attempt: Int) -> Duration {
        var ceiling = minimum
        for _ in 0..<min(max(attempt, 0), 32) {
            ceiling = ceiling * 2
            if ceiling >= maximum { break }
        }
        ceiling = min(ceiling, maximum)
        return ceiling / 2 + ceiling / 2 * unitRandom()
    }

    private mutating func unitRandom() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
