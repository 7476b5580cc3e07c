public import Foundation

/// One stored quantity sample as the statistics read it: span, value, provenance, subject and tie-break keys.
///
/// Both ``CumulativeMerge`` and ``DiscreteStatistics`` take these; a store builds them from its rows after the
/// permission and predicate filters have run (`docs/store-semantics.md`, item 10). `start == end` is an instant.
/// Samples with `end < start` are invalid (item 23) and every statistic ignores them.
public struct StatisticsSample: Hashable, Sendable {
    /// Where the sample starts.
    public var start: Instant
    /// Where it ends; equal to `start` for an instant.
    public var end: Instant
    /// The value in the type's canonical unit.
    public var value: Double
    /// The `(source, device)` pair that priority lists rank (item 4).
    public var provenance: Provenance
    /// Who wore the sensor; `nil` is a subject of its own (item 9).
    public var subject: String?
    /// The second field of the merge's winner key (item 2), greater = more recent. The store decides what it
    /// holds: every sample's explicit `last_modified` if all samples of the merge have one, else the row's write
    /// order. Only ``CumulativeMerge`` reads it.
    public var lastModified: Int64
    /// The sample's identifier: the last tie-break of the merge key and of `recent` (items 2 and 16), compared
    /// as the lowercase canonical string.
    public var uuid: UUID

    /// A sample for the statistics; `lastModified` matters only to ``CumulativeMerge``.
    public init(
        start: Instant, end: Instant, value: Double, provenance: Provenance, subject: String? = nil,
        lastModified: Int64 = 0, uuid: UUID = UUID()
    ) {
        self.start = start
        self.end = end
        self.value = value
        self.provenance = provenance
        self.subject = subject
        self.lastModified = lastModified
        self.uuid = uuid
    }

    /// The statistics view of a stored sample, with the merge's `lastModified` key supplied by the store.
    public init(_ sample: QuantitySample, lastModified: Int64 = 0) {
        self.init(
            start: sample.start, end: sample.end, value: sample.value, provenance: sample.provenance,
            subject: sample.subject, lastModified: lastModified, uuid: sample.id)
    }

    var isValid: Bool { start <= end }
}

/// A UUID as two big-endian words. Comparing them orders exactly as the lowercase canonical strings do: each hex
/// digit maps to one nibble, `0`-`9` sort below `a`-`f`, and the hyphens sit at the same places in every string.
struct UUIDOrder: Hashable, Comparable {
    let high: UInt64
    let low: UInt64

    init(_ uuid: UUID) {
        let b = uuid.uuid
        let high = [b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = [b.8, b.9, b.10, b.11, b.12, b.13, b.14, b.15].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.high = high
        self.low = low
    }

    static func < (lhs: Self, rhs: Self) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}

/// How requested bucket borders map onto the strictly increasing "elementary" borders the sweeps run on.
///
/// Requested bucket `i` is `[borders[i], borders[i+1])`. With strictly increasing borders (the normal case) every
/// requested bucket is exactly one elementary bucket. Otherwise the borders are sorted and deduplicated, a
/// requested bucket is the union of the elementary buckets it spans (all statistics here are mergeable), and a
/// bucket whose end is not after its start is empty. No input traps.
struct BorderPlan {
    /// Strictly increasing.
    let elementary: [Int64]
    /// Per requested bucket, the elementary bucket indices it covers (empty for an empty bucket).
    let parts: [Range<Int>]

    init(_ borders: [Instant]) {
        let raw = borders.map(\.milliseconds)
        let increasing = zip(raw, raw.dropFirst()).allSatisfy { $0 < $1 }
        if increasing {
            elementary = raw
            parts = raw.count < 2 ? [] : (0..<(raw.count - 1)).map { $0..<($0 + 1) }
            return
        }
        let sorted = Array(Set(raw)).sorted()
        elementary = sorted
        var index: [Int64: Int] = [:]
        for (i, t) in sorted.enumerated() { index[t] = i }
        parts = zip(raw, raw.dropFirst()).map { lower, upper in
            guard lower < upper, let l = index[lower], let u = index[upper] else { return 0..<0 }
            return l..<u
        }
    }

    var elementaryCount: Int { max(0, elementary.count - 1) }

    /// The elementary bucket `[e_j, e_{j+1})` holding `t`, or `nil` outside every bucket.
    func bucket(containing t: Int64) -> Int? {
        let upper = firstIndex(after: t)  // elementary[upper - 1] <= t < elementary[upper]
        guard upper >= 1, upper < elementary.count else { return nil }
        return upper - 1
    }

    /// The first elementary bucket whose end is after `t` (its index may be `elementaryCount`: none).
    func firstBucket(endingAfter t: Int64) -> Int {
        max(0, firstIndex(after: t) - 1)
    }

    /// The index of the first elementary border greater than `t`.
    private func firstIndex(after t: Int64) -> Int {
        var low = 0
        var high = elementary.count
        while low < high {
            let mid = (low + high) / 2
            if elementary[mid] <= t { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Folds per-elementary-bucket results into the requested buckets.
    func requested<Part, Result>(
        _ elementaryParts: [Part], borders: [Instant], empty: Part, combine: (Part, Part) -> Part,
        make: (Instant, Instant, Part) -> Result
    ) -> [Result] {
        zip(parts, zip(borders, borders.dropFirst())).map { range, bounds in
            let part: Part
            if range.count == 1 {
                part = elementaryParts[range.lowerBound]
            } else {
                part = elementaryParts[range].reduce(empty, combine)
            }
            return make(bounds.0, bounds.1, part)
        }
    }
}
