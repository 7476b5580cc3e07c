/// How long a store may be told to keep a type: 1 day to 36,525 days (100 years); longer is `--forever` (no
/// retention). Both engines refuse a period outside it, and `prune` keeps every sample of a type whose stored
/// period is beyond it (a store written before the limit), so the cutoff arithmetic cannot overflow.
public enum RetentionLimits {
    public static let days: ClosedRange<Int> = 1...36_525
}
