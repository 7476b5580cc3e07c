import Health

/// Quarter-hour rollups of cumulative types (steps, distance, energy), which let a merged total over a year read a
/// row per stream and quarter hour instead of every sample (`docs/store-semantics.md`, item 13).
///
/// A stream's quarter hour keeps the pro-rated sum of its samples' portions in the quarter, and what it takes to
/// tell whether the source-priority merge (``CumulativeMerge``) can be answered from those sums alone: the span
/// and total length the portions cover, the range of their sequence numbers (the merge's `lastModified`) and
/// whether any two of them overlap. Where it cannot (``merge(_:rank:)`` answers `nil`), the caller sweeps that
/// quarter's raw samples: the merge is local in time, so a quarter swept on its own gives the same answer as in
/// a sweep of the whole range.
public enum CumulativeRollup {
    /// Samples longer than this (a day) are not spread over quarter hours: the quarters they cross are swept.
    public static let longestSpread: Int64 = 86_400_000

    /// Whether a sample of `start...end` is spread over quarter hours rather than kept as a long span.
    public static func isSpread(start: Int64, end: Int64) -> Bool {
        end >= start && end - start <= longestSpread
    }

    /// Calls `body(quarter, portion)` for each quarter hour the sample `[start, end)` of `value` covers: an
    /// interval's portion is `value × overlap / duration` over each quarter it overlaps; an instant gives its whole
    /// value to the quarter holding it, marked as not clean (an instant competes at its time, which only a sweep
    /// decides).
    public static func forEachPortion(
        start: Int64, end: Int64, value: Double, seq: Int64, _ body: (Int64, CumulativeRollupValue) throws -> Void
    ) rethrows {
        guard end > start else {
            var portion = CumulativeRollupValue()
            portion.add(start: start, end: end, amount: value, seq: seq)
            try body(Rollup.bucket(start), portion)
            return
        }
        let duration = Double(end - start)
        var quarter = Rollup.bucket(start)
        while quarter < end {
            let from = max(start, quarter)
            let to = min(end, quarter + Rollup.milliseconds)
            var portion = CumulativeRollupValue()
            portion.add(start: from, end: to, amount: value * Double(to - from) / duration, seq: seq)
            try body(quarter, portion)
            quarter += Rollup.milliseconds
        }
    }

    /// One stream's quarter hour, as the merge reads it: `stream` numbers the provenance in the caller's tables.
    public struct Entry: Sendable {
        public var stream: Int
        public var subjectID: Int64
        public var value: CumulativeRollupValue

        public init(stream: Int, subjectID: Int64, value: CumulativeRollupValue) {
            self.stream = stream
            self.subjectID = subjectID
            self.value = value
        }
    }

    /// A quarter hour's merged sum, when its rollups decide it.
    public struct Merged: Sendable {
        /// The sum, or `nil` when no sample took part (``CumulativeMerge/Bucket/sum``).
        public var sum: Double?
        /// The streams that counted with a positive amount, one bit per stream number (numbers below 64).
        public var winners: UInt64

        public init(sum: Double?, winners: UInt64) {
            self.sum = sum
            self.winners = winners
        }
    }

    /// The merge of one quarter hour from its streams' rollups, or `nil` when only a sweep of the raw samples can
    /// tell. `ranks[stream]` is the merge's rank of the stream's provenance (``CumulativeMerge/contenderRank(_:)``):
    /// `nil` drops it. `entries` is reordered (by subject and span); it allocates nothing.
    ///
    /// Each subject is merged on its own (item 9) and the results added, subjects in ascending order (so that the
    /// floating-point additions do not depend on the rows' order). Within a subject the rollups decide when
    /// every remaining stream's portions are clean (no two overlap, no instant) and either
    /// - one stream is left: its sum;
    /// - the streams' spans do not overlap: every stream counts in full;
    /// - one stream beats every other everywhere (a higher rank, or the same rank and every sequence number later)
    ///   and covers, without a gap, a span holding every other stream's span: only it counts.
    /// A counted positive stream numbered 64 or more cannot be named in ``Merged/winners``, so it is `nil` too.
    public static func merge(_ entries: inout [Entry], ranks: [Int?]) -> Merged? {
        // Drop the excluded streams; any unclean one left means a sweep.
        var count = 0
        for index in entries.indices {
            let entry = entries[index]
            guard entry.stream < ranks.count, ranks[entry.stream] != nil else { continue }
            guard entry.value.clean else { return nil }
            entries[count] = entry
            count += 1
        }
        // Insertion sort by (subject, start, end): a quarter has a handful of streams.
        if count > 1 {
            for index in 1..<count {
                let entry = entries[index]
                var position = index
                while position > 0, precedes(entry, entries[position - 1]) {
                    entries[position] = entries[position - 1]
                    position -= 1
                }
                entries[position] = entry
            }
        }
        var result = Merged(sum: nil, winners: 0)
        var first = 0
        while first < count {
            var last = first + 1
            while last < count, entries[last].subjectID == entries[first].subjectID { last += 1 }
            guard let counted = counting(entries, first..<last, ranks) else { return nil }
            for index in first..<last where counted == nil || counted == index {
                let value = entries[index].value
                result.sum = (result.sum ?? 0) + value.sum
                if value.positive {
                    guard entries[index].stream < 64 else { return nil }
                    result.winners |= 1 << UInt64(entries[index].stream)
                }
            }
            first = last
        }
        return result
    }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        (a.subjectID, a.value.minStart, a.value.maxEnd) < (b.subjectID, b.value.minStart, b.value.maxEnd)
    }

    /// Which streams of one subject (`range`, sorted by span) count in full: `.some(nil)` every one, `.some(i)`
    /// only entry `i`, or `nil` when the rollups cannot tell.
    private static func counting(_ entries: [Entry], _ range: Range<Int>, _ ranks: [Int?]) -> Int?? {
        if range.count == 1 { return .some(nil) }
        var reach = Int64.min
        var disjoint = true
        for index in range {
            if entries[index].value.minStart < reach {
                disjoint = false
                break
            }
            reach = max(reach, entries[index].value.maxEnd)
        }
        if disjoint { return .some(nil) }
        for index in range where entries[index].value.isContiguous {
            let w = entries[index].value
            let winnerRank = ranks[entries[index].stream] ?? 0
            var beatsAll = true
            for otherIndex in range where otherIndex != index {
                let o = entries[otherIndex].value
                let otherRank = ranks[entries[otherIndex].stream] ?? 0
                let outranks = winnerRank > otherRank || (winnerRank == otherRank && w.minSeq > o.maxSeq)
                guard outranks, o.minStart >= w.minStart, o.maxEnd <= w.maxEnd else {
                    beatsAll = false
                    break
                }
            }
            if beatsAll { return .some(index) }
        }
        return nil
    }
}

/// What one stream's quarter hour of a cumulative type keeps (``CumulativeRollup``).
public struct CumulativeRollupValue: Hashable, Sendable {
    /// The pro-rated sum of the portions.
    public var sum: Double = 0
    /// The portions' total length in milliseconds.
    public var covered: Int64 = 0
    /// The earliest portion start and the latest portion end.
    public var minStart: Int64 = .max
    public var maxEnd: Int64 = .min
    /// The range of the samples' sequence numbers (the merge's `lastModified`).
    public var minSeq: Int64 = .max
    public var maxSeq: Int64 = .min
    /// No two portions overlap and none is an instant.
    public var clean = true
    /// Some portion's amount is positive (the merge names a source only for a positive amount).
    public var positive = false

    public init() {}

    /// The portions cover their span without a gap.
    public var isContiguous: Bool { clean && covered == maxEnd - minStart }

    /// Adds a portion `[start, end)` of `amount` from a sample with sequence number `seq`.
    public mutating func add(start: Int64, end: Int64, amount: Double, seq: Int64) {
        var portion = CumulativeRollupValue()
        portion.sum = amount
        portion.covered = end - start
        portion.minStart = start
        portion.maxEnd = end
        portion.minSeq = seq
        portion.maxSeq = seq
        portion.clean = end > start
        portion.positive = amount > 0
        merge(portion)
    }

    /// Adds another value of the same stream and quarter. It stays clean only when both were and their spans do
    /// not overlap (conservative: portions added out of order into a gap make it unclean, and a sweep decides).
    public mutating func merge(_ other: CumulativeRollupValue) {
        let apart = covered == 0 && minStart == .max || other.minStart >= maxEnd || other.maxEnd <= minStart
        clean = clean && other.clean && apart
        sum += other.sum
        covered += other.covered
        minStart = Swift.min(minStart, other.minStart)
        maxEnd = Swift.max(maxEnd, other.maxEnd)
        minSeq = Swift.min(minSeq, other.minSeq)
        maxSeq = Swift.max(maxSeq, other.maxSeq)
        positive = positive || other.positive
    }

    /// The largest covered length ``shape(bucket:)`` keeps: more only arises where portions overlap, and then
    /// the value is not clean and its length is not read.
    static let shapeField: Int64 = (1 << 20) - 1

    /// The span, covered length and flags as one integer column, relative to the quarter's start `bucket` (the
    /// portions lie inside it, so each offset fits in 20 bits): bits 0-19 the covered length (at most
    /// ``shapeField``), 20-39 the earliest start, 40-59 the latest end, bit 60 clean, bit 61 positive.
    public func shape(bucket: Int64) -> Int64 {
        let field = Self.shapeField
        let start = (minStart - bucket) & field
        let end = (maxEnd - bucket) & field
        return Swift.min(covered, field) | start << 20 | end << 40 | (clean ? 1 << 60 : 0) | (positive ? 1 << 61 : 0)
    }

    /// A value read back from its columns (``shape(bucket:)``).
    public init(sum: Double, shape: Int64, bucket: Int64, minSeq: Int64, maxSeq: Int64) {
        let field = Self.shapeField
        self.sum = sum
        covered = shape & field
        minStart = bucket + (shape >> 20 & field)
        maxEnd = bucket + (shape >> 40 & field)
        self.minSeq = minSeq
        self.maxSeq = maxSeq
        clean = shape >> 60 & 1 != 0
        positive = shape >> 61 & 1 != 0
    }
}
