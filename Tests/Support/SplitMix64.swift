/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, seedable generator, so that every random test case
/// reproduces from its seed. Shared by all test targets.
public struct SplitMix64: RandomNumberGenerator {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `a` equals `b` to within 1e-9 relative or 1e-9 absolute (`docs/store-semantics.md`, item 12); two `nil`s are equal.
public func nearlyEqual(_ a: Double?, _ b: Double?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case (let x?, let y?): abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
    default: false
    }
}
