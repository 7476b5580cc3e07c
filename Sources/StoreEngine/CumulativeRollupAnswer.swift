public import Health

/// Cumulative statistics of one query answered from quarter-hour rollups (``CumulativeRollup``), assembled the same
/// way by both engines, which differ only in how they read their tables:
/// 1. ``sweep(spanFrom:to:)`` for every long sample reaching the range (its quarters are swept whatever their
///    rollups say);
/// 2. every rollup row of the range, in quarter order: ``add(quarter:origin:sum:subjectID:shape:minSeq:maxSeq:provenance:)``
///    (merged) or ``add(quarter:origin:sum:provenance:)`` (by source), then ``finishRows()``: each quarter is
///    merged from its rows (``CumulativeRollup/merge(_:ranks:)``) or marked for the sweep;
/// 3. for each of ``sweptRuns``, the raw samples of its range through ``addSwept(_:samples:)``;
/// 4. ``results()``.
///
/// Streams are numbered as their rows come (``CumulativeRollup/Entry/stream``), so that the loop over the rows hashes
/// and allocates nothing per quarter; each quarter's answer goes straight into its query bucket.
public struct CumulativeRollupAnswer {
    /// The longest range answered from rollups, in quarter hours (30 years): the answer keeps a few bytes per
    /// quarter; a longer range is swept, whose memory follows the samples, not the range.
    public static let maximumQuarters: Int64 = 30 * 365 * 96

    /// Whether `query`'s buckets let the rollups answer it: a cumulative type, not `exact`, buckets on quarter-hour
    /// borders, one after the other, over at most ``maximumQuarters``. Whether the caller may read the type (an
    /// app that sees only its own samples needs the raw rows) is the engine's to check.
    public static func fits(_ query: StatisticsQuery) -> Bool {
        guard !query.exact, query.type.aggregation == .cumulative, let first = query.buckets.first,
            let last = query.buckets.last,
            last.end.milliseconds - first.start.milliseconds <= maximumQuarters * Rollup.milliseconds
        else { return false }
        var previousEnd: Int64?
        for bucket in query.buckets {
            let start = bucket.start.milliseconds
            let end = bucket.end.milliseconds
            guard start % Rollup.milliseconds == 0, end % Rollup.milliseconds == 0, end > start,
                previousEnd.map({ $0 == start }) ?? true
            else { return false }
            previousEnd = end
        }
        return true
    }

    /// A stream's source and device ids in the engine's tables.
    public struct Origin: Hashable, Sendable {
        public var source: Int64
        public var device: Int64

        public init(source: Int64, device: Int64) {
            self.source = source
            self.device = device
        }
    }

    /// The start of the first quarter and the end of the last (ms).
    public let from: Int64
    public let to: Int64
    /// Whether the query wants sums per provenance rather than merged.
    public let separate: Bool
    private let buckets: [StatisticsBucket]
    private let merge: CumulativeMerge
    /// The query bucket of each quarter.
    private var bucketOf: [Int32]
    /// The quarters swept from raw samples.
    private var swept: [Bool]
    // The streams met so far, by number, and the merge's rank of each.
    private var provenances: [Provenance] = []
    private var ranks: [Int?] = []
    private var numbers: [Provenance: Int] = [:]
    private var streams: [Origin: Int] = [:]
    /// The first few origins, found by a look along a list (no hashing in the row loop).
    private var recent: [(origin: Origin, stream: Int)] = []
    // Per bucket: the merged sum, the streams that won (a bit each, below 64) and any other winning provenance;
    // or, by source, the sum per stream.
    private var sums: [Double?]
    private var winners: [UInt64]
    private var otherWinners: [Int: Set<Provenance>] = [:]
    private var streamSums: [[Double?]]
    // The quarter whose rows are being read, and its entries.
    private var current = -1
    private var entries: [CumulativeRollup.Entry] = []

    /// An answer to `query` (which ``fits(_:)``) under `merge`.
    public init(_ query: StatisticsQuery, merge: CumulativeMerge) {
        buckets = query.buckets
        self.merge = merge
        separate = query.separateBySource
        from = query.buckets.first?.start.milliseconds ?? 0
        to = query.buckets.last?.end.milliseconds ?? from
        let quarterCount = Int((to - from) / Rollup.milliseconds)
        bucketOf = [Int32](repeating: 0, count: quarterCount)
        var quarter = 0
        for (index, bucket) in query.buckets.enumerated() {
            let quarters = Int((bucket.end.milliseconds - bucket.start.milliseconds) / Rollup.milliseconds)
            for _ in 0..<quarters {
                bucketOf[quarter] = Int32(index)
                quarter += 1
            }
        }
        swept = [Bool](repeating: false, count: quarterCount)
        sums = [Double?](repeating: nil, count: separate ? 0 : buckets.count)
        winners = [UInt64](repeating: 0, count: separate ? 0 : buckets.count)
        streamSums = [[Double?]](repeating: [], count: separate ? buckets.count : 0)
    }

    /// Marks the quarters a sample of `[start, end)` longer than ``CumulativeRollup/longestSpread`` crosses for the
    /// sweep.
    public mutating func sweep(spanFrom start: Int64, to end: Int64) {
        var at = max(from, Rollup.bucket(start))
        let last = min(to, end)
        while at < last {
            swept[Int((at - from) / Rollup.milliseconds)] = true
            at += Rollup.milliseconds
        }
    }

    private mutating func number(_ provenance: Provenance) -> Int {
        if let known = numbers[provenance] { return known }
        numbers[provenance] = provenances.count
        provenances.append(provenance)
        ranks.append(merge.contenderRank(provenance))
        return provenances.count - 1
    }

    private mutating func stream(_ origin: Origin, _ provenance: (Origin) throws -> Provenance) rethrows -> Int {
        for known in recent where known.origin == origin { return known.stream }
        if let known = streams[origin] { return known }
        let stream = number(try provenance(origin))
        streams[origin] = stream
        if recent.count < 8 { recent.append((origin, stream)) }
        return stream
    }

    /// The quarter index of a row's `quarter` start, moving on (and merging the quarter before) when it changes;
    /// `nil` for a quarter outside the range or already swept.
    private mutating func enter(_ quarter: Int64) -> Int? {
        guard quarter >= from, quarter < to else { return nil }
        let at = Int((quarter - from) / Rollup.milliseconds)
        if at != current {
            decide()
            current = at
        }
        return swept[at] ? nil : at
    }

    /// One rollup row (for a merged answer), rows in quarter order: `provenance` names an origin met the first
    /// time.
    public mutating func add(
        quarter: Int64, origin: Origin, sum: Double, subjectID: Int64, shape: Int64, minSeq: Int64, maxSeq: Int64,
        provenance: (Origin) throws -> Provenance
    ) rethrows {
        guard enter(quarter) != nil else { return }
        let stream = try stream(origin, provenance)
        entries.append(
            CumulativeRollup.Entry(
                stream: stream, subjectID: subjectID,
                value: CumulativeRollupValue(sum: sum, shape: shape, bucket: quarter, minSeq: minSeq, maxSeq: maxSeq)))
    }

    /// One rollup row's sum (for an answer by source), rows in quarter order.
    public mutating func add(
        quarter: Int64, origin: Origin, sum: Double, provenance: (Origin) throws -> Provenance
    ) rethrows {
        guard let at = enter(quarter) else { return }
        addStreamSum(sum, bucket: Int(bucketOf[at]), stream: try stream(origin, provenance))
    }

    /// A sum of one stream over the quarters of query bucket `bucket` that are not swept (for an answer by source
    /// that the engine's server added up: ``sweptQuarterStarts`` tells which to leave out).
    public mutating func add(
        bucket: Int, origin: Origin, sum: Double, provenance: (Origin) throws -> Provenance
    ) rethrows {
        guard bucket >= 0, bucket < streamSums.count else { return }
        addStreamSum(sum, bucket: bucket, stream: try stream(origin, provenance))
    }

    /// The starts of the quarters marked for the sweep so far.
    public var sweptQuarterStarts: [Int64] {
        swept.indices.filter { swept[$0] }.map { from + Int64($0) * Rollup.milliseconds }
    }

    /// After the last row.
    public mutating func finishRows() {
        decide()
        current = -1
    }

    /// Merges the entries of the current quarter, or marks it for the sweep.
    private mutating func decide() {
        guard current >= 0, !entries.isEmpty else { return }
        if let merged = CumulativeRollup.merge(&entries, ranks: ranks) {
            let bucket = Int(bucketOf[current])
            if let sum = merged.sum { sums[bucket] = (sums[bucket] ?? 0) + sum }
            winners[bucket] |= merged.winners
        } else {
            swept[current] = true
        }
        entries.removeAll(keepingCapacity: true)
    }

    private mutating func addStreamSum(_ sum: Double, bucket: Int, stream: Int) {
        if streamSums[bucket].count <= stream {
            streamSums[bucket].append(contentsOf: repeatElement(nil, count: stream + 1 - streamSums[bucket].count))
        }
        streamSums[bucket][stream] = (streamSums[bucket][stream] ?? 0) + sum
    }

    /// The swept quarters in runs (neighbours a little apart share one read), each with its quarters' borders:
    /// the engine reads the raw samples of `[borders.first, borders.last)` for ``addSwept(_:samples:)``.
    public var sweptRuns: [(quarters: Range<Int>, borders: [Instant])] {
        var runs: [Range<Int>] = []
        for quarter in swept.indices where swept[quarter] {
            if let lastRun = runs.last, quarter - lastRun.upperBound <= 4 {
                runs[runs.count - 1] = lastRun.lowerBound..<(quarter + 1)
            } else {
                runs.append(quarter..<(quarter + 1))
            }
        }
        let from = from
        return runs.map { run in
            let borders = (run.lowerBound...run.upperBound).map {
                Instant(milliseconds: from + Int64($0) * Rollup.milliseconds)
            }
            return (run, borders)
        }
    }

    /// How many quarters come from the rollups and how many from the sweep.
    public var quarterCounts: (fromRollups: Int, swept: Int) {
        let sweptCount = swept.count(where: { $0 })
        return (swept.count - sweptCount, sweptCount)
    }

    /// The raw samples of a swept run (all the caller may read from `borders.first` to `borders.last`, with those
    /// reaching in from before): only its swept quarters count, the others were decided from their rollups.
    public mutating func addSwept(_ run: (quarters: Range<Int>, borders: [Instant]), samples: [StatisticsSample]) {
        if separate {
            for (quarter, part) in zip(run.quarters, CumulativeMerge.separateBySource(samples, borders: run.borders))
            where swept[quarter] {
                for (provenance, sum) in part.sums {
                    addStreamSum(sum, bucket: Int(bucketOf[quarter]), stream: number(provenance))
                }
            }
        } else {
            for (quarter, part) in zip(run.quarters, merge.buckets(samples, borders: run.borders)) where swept[quarter]
            {
                let bucket = Int(bucketOf[quarter])
                if let sum = part.sum { sums[bucket] = (sums[bucket] ?? 0) + sum }
                if !part.sources.isEmpty { otherWinners[bucket, default: []].formUnion(part.sources) }
            }
        }
    }

    /// The statistics, as the sweep gives them (``StatisticsQuery/sweep(_:priority:)``).
    public func results() -> [StatisticsResult] {
        var results: [StatisticsResult] = []
        results.reserveCapacity(buckets.count)
        for (index, bucket) in buckets.enumerated() {
            if separate {
                let named = streamSums[index].enumerated().compactMap { stream, sum in
                    sum.map { (provenance: provenances[stream], sum: $0) }
                }
                for (provenance, sum) in named.sorted(by: { $0.provenance < $1.provenance }) {
                    results.append(
                        StatisticsResult(bucket: bucket, provenance: provenance, sum: sum, sources: [provenance]))
                }
            } else {
                var sources = otherWinners[index] ?? []
                var bits = winners[index]
                while bits != 0 {
                    sources.insert(provenances[bits.trailingZeroBitCount])
                    bits &= bits - 1
                }
                results.append(StatisticsResult(bucket: bucket, sum: sums[index], sources: sources.sorted()))
            }
        }
        return results
    }
}
