/// The source-priority merge of a cumulative type (steps, distance, energy) into bucket sums: what
/// `HKStatisticsCollectionQuery` does with `cumulativeSum`, with Health Connect's inspectable algorithm.
///
/// Implements the merge of `docs/store-semantics.md`, items 1-11:
///
/// - Buckets are `[start, end)`; an instant exactly on a border belongs to the later bucket (item 1).
/// - Wherever samples overlap, only the winner counts. The winner is the greatest by
///   `(rank, lastModified, start, end, value, uuid)` (item 2); `rank` is `priority.count - index` of the first
///   entry that matches the sample's provenance (item 4: `Provenance(source: s, device: nil)` matches only samples
///   without a device, `Provenance(source: s, device: Provenance.anyDevice)` every sample of the source). Unranked provenances rank below every ranked one (``UnrankedPolicy/gapFill``) or are
///   dropped (``UnrankedPolicy/exclude``) (item 3).
/// - An interval sample contributes `value × won / duration` for each stretch it wins, in real elapsed
///   milliseconds (item 6). An instant competes with every sample whose closed span contains its time and adds
///   its whole value only if it wins; at most one instant value counts per time (item 5).
/// - Each subject is merged on its own and the results are added (item 9).
///
/// The sweep sorts the event times once and keeps the open intervals in a max-heap with lazy removal, so a merge
/// costs O((n + b) log(n + b)) for n samples and b borders.
public struct CumulativeMerge: Hashable, Sendable {
    /// What happens to samples whose provenance is not in the priority list (`docs/store-semantics.md`, item 3, D2).
    public enum UnrankedPolicy: String, Hashable, Sendable, CaseIterable {
        /// Unranked provenances rank below every ranked one and fill the gaps they leave; among themselves they
        /// compete by the rest of the key, so the later `lastModified` wins.
        case gapFill
        /// Unranked provenances are dropped before the merge.
        case exclude
    }

    /// One bucket of a merge.
    public struct Bucket: Hashable, Sendable {
        /// The bucket's first instant (included).
        public var start: Instant
        /// The bucket's end (excluded).
        public var end: Instant
        /// The merged sum in the canonical unit, or `nil` when no sample was open over a positive-length stretch
        /// of the bucket and no instant won in it (item 7). A winning zero-valued sample makes it 0.
        /// In particular samples that only end at the bucket's start, and an instant at the start hidden by an
        /// interval ending there, leave it `nil` (item 7's deliberate deviations from Health Connect).
        public var sum: Double?
        /// The provenances that won a stretch or an instant with a positive amount (item 8).
        public var sources: Set<Provenance>

        public init(start: Instant, end: Instant, sum: Double?, sources: Set<Provenance>) {
            self.start = start
            self.end = end
            self.sum = sum
            self.sources = sources
        }
    }

    /// One bucket of ``separateBySource(_:borders:)``.
    public struct SourceBucket: Hashable, Sendable {
        /// The bucket's first instant (included).
        public var start: Instant
        /// The bucket's end (excluded).
        public var end: Instant
        /// The unmerged, pro-rated sum of every provenance with a positive overlap or an instant in the bucket,
        /// including those whose sum is 0 (item 11).
        public var sums: [Provenance: Double]

        public init(start: Instant, end: Instant, sums: [Provenance: Double]) {
            self.start = start
            self.end = end
            self.sums = sums
        }
    }

    /// The type's priority list, highest first (items 2 and 4).
    public var priority: [Provenance]
    /// What happens to provenances missing from `priority` (item 3); `gapFill` by default (D2).
    public var unranked: UnrankedPolicy

    /// A merge with a type's priority list (highest first) and unranked policy.
    public init(priority: [Provenance] = [], unranked: UnrankedPolicy = .gapFill) {
        self.priority = priority
        self.unranked = unranked
    }

    /// The rank of `provenance` (`priority.count - index` of its first entry; higher wins), or `nil` when it is
    /// unranked (items 2 and 4).
    public func rank(of provenance: Provenance) -> Int? {
        priority.firstIndex { $0.matches(provenance) }.map { priority.count - $0 }
    }

    /// The rank a sample of `provenance` competes with: its ``rank(of:)``, 0 when it is unranked and fills gaps,
    /// or `nil` when the unranked policy drops it (item 3).
    public func contenderRank(_ provenance: Provenance) -> Int? {
        if let rank = rank(of: provenance) { return rank }
        return unranked == .gapFill ? 0 : nil
    }

    /// Merges `samples` of one cumulative type into the buckets `[borders[i], borders[i+1])`.
    ///
    /// - Parameters:
    ///   - samples: the filtered samples (item 10) of one cumulative type; samples with
    ///     `end < start` are ignored.
    ///   - borders: the bucket borders, normally strictly increasing. Fewer than two give no buckets. Should a
    ///     border not be after the one before it, that bucket is empty (`nil`), and every other bucket still holds
    ///     the merge over exactly its own span.
    /// - Returns: `borders.count - 1` buckets in order (none for fewer than two borders).
    public func buckets(_ samples: [StatisticsSample], borders: [Instant]) -> [Bucket] {
        let plan = BorderPlan(borders)
        // The first entry that matches decides: an exact entry, or a source's every-device entry (item 4).
        var ranks: [Provenance: Int] = [:]
        var sourceRanks: [String: Int] = [:]
        for (index, entry) in priority.enumerated() {
            if entry.device == Provenance.anyDevice {
                if sourceRanks[entry.source] == nil { sourceRanks[entry.source] = priority.count - index }
            } else if ranks[entry] == nil {
                ranks[entry] = priority.count - index
            }
        }
        var bySubject: [String?: [Contender]] = [:]
        for sample in samples where sample.isValid {
            let rank: Int
            let exact = ranks[sample.provenance]
            let bySource = sourceRanks.isEmpty ? nil : sourceRanks[sample.provenance.source]
            if exact != nil || bySource != nil {
                rank = max(exact ?? 0, bySource ?? 0)
            } else if unranked == .gapFill {
                rank = 0
            } else {
                continue
            }
            bySubject[sample.subject, default: []].append(Contender(sample, rank: rank))
        }
        // A fixed subject order keeps the floating-point additions, and so the result, independent of input order.
        let subjects = bySubject.keys.sorted { lhs, rhs in
            switch (lhs, rhs) {
            case (nil, nil): false
            case (nil, _): true
            case (_, nil): false
            case (let l?, let r?): l < r
            }
        }
        var tallies = Array(repeating: Tally(), count: plan.elementaryCount)
        for subject in subjects {
            let merged = Self.sweep(bySubject[subject] ?? [], plan: plan)
            for index in tallies.indices {
                tallies[index] = tallies[index].adding(merged[index])
            }
        }
        return plan.requested(tallies, borders: borders, empty: Tally(), combine: { $0.adding($1) }) {
            Bucket(start: $0, end: $1, sum: $2.touched ? $2.sum : nil, sources: $2.sources)
        }
    }

    /// The unmerged sums per provenance (HealthKit's `separateBySource`; item 11, D7).
    ///
    /// Every sample counts, whatever the priority list and the unranked policy say: an interval contributes
    /// `value × overlap / duration` to each bucket it overlaps, an instant its whole value to the bucket holding
    /// its time (the later bucket on a border, item 1). Subjects are added together.
    ///
    /// - Parameters:
    ///   - samples: the filtered samples of one cumulative type; samples with `end < start` are ignored.
    ///   - borders: the bucket borders, as for ``buckets(_:borders:)``.
    /// - Returns: `borders.count - 1` buckets; each lists every provenance with a positive overlap or an instant
    ///   in it, even when its sum is 0.
    public static func separateBySource(_ samples: [StatisticsSample], borders: [Instant]) -> [SourceBucket] {
        let plan = BorderPlan(borders)
        let edges = plan.elementary
        var sums = Array(repeating: [Provenance: Double](), count: plan.elementaryCount)
        let ordered = samples.filter(\.isValid).sorted { lhs, rhs in
            (lhs.start, lhs.end, UUIDOrder(lhs.uuid)) < (rhs.start, rhs.end, UUIDOrder(rhs.uuid))
        }
        for sample in ordered {
            let start = sample.start.milliseconds
            let end = sample.end.milliseconds
            if start == end {
                if let bucket = plan.bucket(containing: start) {
                    sums[bucket][sample.provenance, default: 0] += sample.value
                }
                continue
            }
            let duration = Double(end - start)
            var bucket = plan.firstBucket(endingAfter: start)
            while bucket < plan.elementaryCount, edges[bucket] < end {
                let overlap = min(end, edges[bucket + 1]) - max(start, edges[bucket])
                sums[bucket][sample.provenance, default: 0] += sample.value * Double(overlap) / duration
                bucket += 1
            }
        }
        return plan.requested(sums, borders: borders, empty: [:], combine: { $0.merging($1, uniquingKeysWith: +) }) {
            SourceBucket(start: $0, end: $1, sums: $2)
        }
    }
}

// MARK: - The sweep

extension CumulativeMerge {
    /// A sample as the sweep sees it, with its resolved rank.
    fileprivate struct Contender {
        let start: Int64
        let end: Int64
        let value: Double
        let provenance: Provenance
        let rank: Int
        let lastModified: Int64
        let uuid: UUIDOrder

        init(_ sample: StatisticsSample, rank: Int) {
            start = sample.start.milliseconds
            end = sample.end.milliseconds
            value = sample.value
            provenance = sample.provenance
            self.rank = rank
            lastModified = sample.lastModified
            uuid = UUIDOrder(sample.uuid)
        }

        /// Whether `self` loses to `other` by `(rank, lastModified, start, end, value, uuid)` (item 2).
        /// Provenance breaks the tie that distinct uuids never leave, so the order is total.
        func losesTo(_ other: Self) -> Bool {
            if rank != other.rank { return rank < other.rank }
            if lastModified != other.lastModified { return lastModified < other.lastModified }
            if start != other.start { return start < other.start }
            if end != other.end { return end < other.end }
            let below = value.isTotallyOrdered(belowOrEqualTo: other.value)
            if below != other.value.isTotallyOrdered(belowOrEqualTo: value) { return below }
            if uuid != other.uuid { return uuid < other.uuid }
            return provenance < other.provenance
        }
    }

    /// What one elementary bucket accumulated.
    fileprivate struct Tally {
        var sum: Double = 0
        /// A sample was open over a positive-length stretch, or an instant won (item 7).
        var touched = false
        var sources: Set<Provenance> = []

        mutating func add(_ amount: Double, from provenance: Provenance) {
            touched = true
            sum += amount
            if amount > 0 { sources.insert(provenance) }
        }

        func adding(_ other: Self) -> Self {
            Tally(sum: sum + other.sum, touched: touched || other.touched, sources: sources.union(other.sources))
        }
    }

    /// A stretch `[t, t + length)` of one elementary bucket won by one interval sample.
    private struct Run {
        let winner: Int
        let bucket: Int
        var length: Int64
    }

    /// Merges one subject's samples into the elementary buckets of `plan`.
    private static func sweep(_ contenders: [Contender], plan: BorderPlan) -> [Tally] {
        var tallies = Array(repeating: Tally(), count: plan.elementaryCount)
        let intervals = contenders.filter { $0.end > $0.start }.sorted { $0.start < $1.start }
        let instants = contenders.filter { $0.end == $0.start }.sorted { $0.start < $1.start }

        var times = plan.elementary
        times.reserveCapacity(times.count + 2 * intervals.count + instants.count)
        for interval in intervals {
            times.append(interval.start)
            times.append(interval.end)
        }
        times.append(contentsOf: instants.map(\.start))
        times.sort()
        var unique: [Int64] = []
        unique.reserveCapacity(times.count)
        for t in times where unique.last != t { unique.append(t) }

        var open = WinnerHeap(intervals)
        var nextInterval = 0
        var nextInstant = 0
        var run: Run?

        func flush(_ run: Run?) {
            guard let run else { return }
            let winner = intervals[run.winner]
            let amount = winner.value * Double(run.length) / Double(winner.end - winner.start)
            tallies[run.bucket].add(amount, from: winner.provenance)
        }

        for (position, t) in unique.enumerated() {
            let bucket = plan.bucket(containing: t)
            while nextInterval < intervals.count, intervals[nextInterval].start == t {
                open.push(nextInterval)
                nextInterval += 1
            }
            // At t itself every interval whose closed span holds t competes with the instants (item 5).
            open.removeTop { intervals[$0].end < t }
            var bestInstant: Contender?
            while nextInstant < instants.count, instants[nextInstant].start == t {
                let instant = instants[nextInstant]
                if bestInstant.map({ $0.losesTo(instant) }) ?? true { bestInstant = instant }
                nextInstant += 1
            }
            if let instant = bestInstant, let bucket, open.top.map({ intervals[$0].losesTo(instant) }) ?? true {
                tallies[bucket].add(instant.value, from: instant.provenance)
            }
            // Over (t, next) only intervals that go on past t compete.
            open.removeTop { intervals[$0].end <= t }
            guard position + 1 < unique.count else { break }
            let length = unique[position + 1] - t
            if let winner = open.top, let bucket {
                tallies[bucket].touched = true
                if var current = run, current.winner == winner, current.bucket == bucket {
                    current.length += length
                    run = current
                } else {
                    flush(run)
                    run = Run(winner: winner, bucket: bucket, length: length)
                }
            } else {
                flush(run)
                run = nil
            }
        }
        flush(run)
        return tallies
    }

    /// A binary max-heap of indices into the interval list, ordered by the winner key. Expired intervals are
    /// removed lazily, when they reach the top: an interval that has ended stays ended as the sweep moves on.
    private struct WinnerHeap {
        private let intervals: [Contender]
        private var heap: [Int] = []

        init(_ intervals: [Contender]) {
            self.intervals = intervals
        }

        var top: Int? { heap.first }

        mutating func push(_ index: Int) {
            heap.append(index)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard intervals[heap[parent]].losesTo(intervals[heap[child]]) else { break }
                heap.swapAt(parent, child)
                child = parent
            }
        }

        /// Pops the top while `expired` holds for it.
        mutating func removeTop(while expired: (Int) -> Bool) {
            while let first = heap.first, expired(first) {
                pop()
            }
        }

        private mutating func pop() {
            guard let last = heap.popLast(), !heap.isEmpty else { return }
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var greatest = parent
                if left < heap.count, intervals[heap[greatest]].losesTo(intervals[heap[left]]) { greatest = left }
                if right < heap.count, intervals[heap[greatest]].losesTo(intervals[heap[right]]) { greatest = right }
                guard greatest != parent else { return }
                heap.swapAt(parent, greatest)
                parent = greatest
            }
        }
    }
}
