/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seedable generator. Every simulated value, every backoff's jitter
/// and every random test case comes from one, so the same seed gives the same numbers on every run and machine.
public struct SplitMix64: RandomNumberGenerator, Hashable, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// SplitMix64's finalizer: spreads the bits of `value` (also a good 64-bit hash step).
    @inline(__always)
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A double in `[0, 1)`, from the top 53 bits of the next value.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// One of `items`, each as likely (`items` must not be empty): what every simulation and property test picks
    /// with, so that a seed gives the same choices everywhere.
    public mutating func pick<Element>(_ items: [Element]) -> Element {
        precondition(!items.isEmpty, "SplitMix64.pick: nothing to pick from")
        return items[Int(next() % UInt64(items.count))]
    }

    /// A double in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }
}
