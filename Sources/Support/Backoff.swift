/// Exponential backoff with jitter (the gateway's reconnects: `docs/bluez.md`, R9). Attempt `n` waits a random
/// time in `[d/2, d]` where `d = min(maximum, minimum * 2^n)`, so that ten straps that lost the link together do
/// not all retry together.
public struct Backoff: Hashable, Sendable {
    public var minimum: Duration
    public var maximum: Duration
    /// The jitter is reproducible from a seed (tests) or seeded per sensor (the service).
    private var random: SplitMix64

    public init(minimum: Duration = .milliseconds(250), maximum: Duration = .seconds(60), seed: UInt64 = 0x5EED) {
        self.minimum = minimum
        self.maximum = max(maximum, minimum)
        self.random = SplitMix64(seed: seed)
    }

    /// The longest wait before attempt number `attempt` (0 for the first retry): `minimum * 2^attempt`, at most
    /// `maximum`. Callers that must not wait at random (a store's reconnection) wait exactly this.
    public func ceiling(attempt: Int) -> Duration {
        var ceiling = minimum
        for _ in 0..<min(max(attempt, 0), 32) {
            ceiling = ceiling * 2
            if ceiling >= maximum { break }
        }
        return min(ceiling, maximum)
    }

    /// The wait before attempt number `attempt` (0 for the first retry): a random time in the upper half of
    /// ``ceiling(attempt:)``.
    public mutating func delay(attempt: Int) -> Duration {
        let ceiling = ceiling(attempt: attempt)
        return ceiling / 2 + ceiling / 2 * random.unit()
    }
}
