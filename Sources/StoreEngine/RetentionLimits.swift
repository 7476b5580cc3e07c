internal import Health

/// How long a store may be told to keep a type: 1 day to 36,525 days (100 years); longer is `--forever` (no
/// retention). Both engines refuse a period outside it, and `prune` keeps every sample of a type whose stored
/// period is beyond it (a store written before the limit), so the cutoff arithmetic cannot overflow.
public enum RetentionLimits {
    public static let days: ClosedRange<Int> = 1...36_525

    /// Throws unless `days` is within ``days``, saying the range and what to do instead.
    public static func check(_ days: Int) throws {
        guard Self.days.contains(days) else {
            throw InvalidSampleError(
                index: 0,
                reason: "retention must be \(Self.days.lowerBound)-\(Self.days.upperBound) days, not \(days) "
                    + "(longer: keep forever)")
        }
    }
}
