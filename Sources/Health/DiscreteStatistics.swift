/// Bucket statistics of a discrete type (heart rate, cadence, speed, stride length, HRV): HealthKit's
/// `discreteAverage`, `discreteMin`, `discreteMax`, `mostRecent`, plus a time-weighted average.
///
/// Discrete types are never priority-merged: every filtered sample of every source counts
/// (`docs/store-semantics.md`, D5). `count`, `sum`, `average`, `minimum`, `maximum` and `mostRecent` use the
/// samples whose **start** lies in the bucket, so they are mergeable: a day is exactly the union of its hours
/// (item 14). `timeWeightedAverage` weighs each sample by the time it covers inside the bucket, and an instant's
/// value is held for a while (item 15).
public struct DiscreteStatistics: Hashable, Sendable {
    /// The statistics of one bucket. With `count == 0` every statistic but `timeWeightedAverage` is `nil`
    /// (item 16); a value held over from an earlier bucket can still give that one a value.
    public struct Bucket: Hashable, Sendable {
        /// The bucket's first instant (included).
        public var start: Instant
        /// The bucket's end (excluded).
        public var end: Instant
        /// The number of samples whose start lies in the bucket.
        public var count: Int
        /// The sum of their values (kept so that buckets can be combined exactly: `average = sum / count`).
        public var sum: Double?
        /// `avg` (item 14): `sum / count`.
        public var average: Double?
        /// `min` (item 14).
        public var minimum: Double?
        /// `max` (item 14).
        public var maximum: Double?
        /// `recent` (item 16): the value of the sample with the greatest `(end, start, uuid)`.
        public var mostRecent: Double?
        /// `recent_end` (item 16): that sample's end.
        public var mostRecentEnd: Instant?
        /// `twa` (item 15): ∫ value dt / covered time inside the bucket, where each sample covers its own
        /// stretch (overlapping samples each count), or `nil` when nothing covers any of the bucket.
        public var timeWeightedAverage: Double?

        public init(
            start: Instant, end: Instant, count: Int, sum: Double?, average: Double?, minimum: Double?,
            maximum: Double?, mostRecent: Double?, mostRecentEnd: Instant?, timeWeightedAverage: Double?
        ) {
            self.start = start
            self.end = end
            self.count = count
            self.sum = sum
            self.average = average
            self.minimum = minimum
            self.maximum = maximum
            self.mostRecent = mostRecent
            self.mostRecentEnd = mostRecentEnd
            self.timeWeightedAverage = timeWeightedAverage
        }
    }

    /// How long an instant's value holds at most, in milliseconds (`max_hold_s`, item 15); 0 or less
    /// gives instants no weight in `timeWeightedAverage`.
    public var maxHoldMilliseconds: Int64

    /// Statistics whose instants hold for at most `maxHoldMilliseconds` (default 5 s, item 15).
    public init(maxHoldMilliseconds: Int64 = 5_000) {
        self.maxHoldMilliseconds = maxHoldMilliseconds
    }

    /// Computes the statistics of `samples` in the buckets `[borders[i], borders[i+1])`.
    ///
    /// For `timeWeightedAverage` an interval sample covers its overlap with the bucket. An instant at `t` covers
    /// `[t, h)`, where `h` is the earliest of `t + maxHoldMilliseconds` and the next start after `t` of a sample of
    /// the same stream (type, source, device, subject); the held stretch spills over borders (item 15).
    ///
    /// - Parameters:
    ///   - samples: the filtered samples of **one** discrete type (a stream is then `(provenance, subject)`);
    ///     samples with `end < start` are ignored.
    ///   - borders: the bucket borders, normally strictly increasing. Fewer than two give no buckets; should a
    ///     border not be after the one before it, that bucket is empty.
    /// - Returns: `borders.count - 1` buckets in order.
    public func buckets(_ samples: [StatisticsSample], borders: [Instant]) -> [Bucket] {
        let plan = BorderPlan(borders)
        let edges = plan.elementary
        var tallies = Array(repeating: Tally(), count: plan.elementaryCount)
        // A fixed order keeps the floating-point sums independent of the input order.
        let ordered = samples.filter(\.isValid).map(Reading.init).sorted { $0.isOlder(than: $1) }

        var streamStarts: [Stream: [Int64]] = [:]
        for reading in ordered {
            streamStarts[reading.stream, default: []].append(reading.start)
        }
        for stream in streamStarts.keys {
            streamStarts[stream]?.sort()
        }

        for reading in ordered {
            if let bucket = plan.bucket(containing: reading.start) {
                tallies[bucket].record(reading)
            }
            let (from, to) = coverage(of: reading, streamStarts: streamStarts[reading.stream] ?? [])
            guard from < to else { continue }
            var bucket = plan.firstBucket(endingAfter: from)
            while bucket < plan.elementaryCount, edges[bucket] < to {
                let overlap = min(to, edges[bucket + 1]) - max(from, edges[bucket])
                tallies[bucket].weigh(reading.value, over: overlap)
                bucket += 1
            }
        }
        return plan.requested(tallies, borders: borders, empty: Tally(), combine: { $0.adding($1) }) {
            $2.bucket(start: $0, end: $1)
        }
    }

    /// The stretch `[from, to)` a reading covers for the time-weighted average.
    private func coverage(of reading: Reading, streamStarts: [Int64]) -> (Int64, Int64) {
        guard reading.start == reading.end else { return (reading.start, reading.end) }
        guard maxHoldMilliseconds > 0 else { return (reading.start, reading.start) }
        let (capped, overflow) = reading.start.addingReportingOverflow(maxHoldMilliseconds)
        var until = overflow ? Int64.max : capped
        // streamStarts is sorted: find the first start after this one.
        var low = 0
        var high = streamStarts.count
        while low < high {
            let mid = (low + high) / 2
            if streamStarts[mid] <= reading.start { low = mid + 1 } else { high = mid }
        }
        if low < streamStarts.count { until = min(until, streamStarts[low]) }
        return (reading.start, until)
    }
}

extension DiscreteStatistics {
    /// The identity whose next sample ends an instant's hold (item 15; the type is the same for all).
    fileprivate struct Stream: Hashable {
        let provenance: Provenance
        let subject: String?
    }

    fileprivate struct Reading {
        let start: Int64
        let end: Int64
        let value: Double
        let uuid: UUIDOrder
        let stream: Stream

        init(_ sample: StatisticsSample) {
            start = sample.start.milliseconds
            end = sample.end.milliseconds
            value = sample.value
            uuid = UUIDOrder(sample.uuid)
            stream = Stream(provenance: sample.provenance, subject: sample.subject)
        }

        /// Order by `(end, start, uuid)`, the `recent` key of item 16; the value breaks the tie that
        /// distinct uuids never leave.
        func isOlder(than other: Self) -> Bool {
            if end != other.end { return end < other.end }
            if start != other.start { return start < other.start }
            if uuid != other.uuid { return uuid < other.uuid }
            return value.isTotallyOrdered(belowOrEqualTo: other.value) && value != other.value
        }
    }

    /// What one elementary bucket accumulated; every field combines across buckets.
    fileprivate struct Tally {
        var count = 0
        var sum: Double = 0
        var minimum: Double?
        var maximum: Double?
        var recent: Reading?
        var weightedSum: Double = 0
        var weight: Int64 = 0

        mutating func record(_ reading: Reading) {
            count += 1
            sum += reading.value
            minimum = Swift.min(minimum ?? reading.value, reading.value)
            maximum = Swift.max(maximum ?? reading.value, reading.value)
            if recent.map({ $0.isOlder(than: reading) }) ?? true { recent = reading }
        }

        mutating func weigh(_ value: Double, over milliseconds: Int64) {
            weightedSum += value * Double(milliseconds)
            weight += milliseconds
        }

        func adding(_ other: Self) -> Self {
            var result = self
            result.count += other.count
            result.sum += other.sum
            if let low = other.minimum { result.minimum = Swift.min(minimum ?? low, low) }
            if let high = other.maximum { result.maximum = Swift.max(maximum ?? high, high) }
            if let theirs = other.recent, recent.map({ $0.isOlder(than: theirs) }) ?? true { result.recent = theirs }
            result.weightedSum += other.weightedSum
            result.weight += other.weight
            return result
        }

        func bucket(start: Instant, end: Instant) -> Bucket {
            let counted = count > 0
            return Bucket(
                start: start, end: end, count: count, sum: counted ? sum : nil,
                average: counted ? sum / Double(count) : nil, minimum: minimum, maximum: maximum,
                mostRecent: recent?.value, mostRecentEnd: recent.map { Instant(milliseconds: $0.end) },
                timeWeightedAverage: weight > 0 ? weightedSum / Double(weight) : nil)
        }
    }
}

extension DiscreteStatistics.Bucket {
    /// The statistics of `parts` taken together, as the bucket from `start` to `end`: the same bucket of several
    /// sources, or consecutive buckets of one (they are mergeable, see the type's notes). Counts and sums add,
    /// the average is their quotient, the extremes are the extremes, and the most recent is the part's with the
    /// latest end (the first of equal ends). A time-weighted average is kept only when a single part has one
    /// (the time each part covered is not kept, so two cannot be weighed together).
    public static func combining(_ parts: [Self], start: Instant, end: Instant) -> Self {
        var combined = Self(
            start: start, end: end, count: 0, sum: nil, average: nil, minimum: nil, maximum: nil, mostRecent: nil,
            mostRecentEnd: nil, timeWeightedAverage: nil)
        var weighted = 0
        for part in parts {
            if let average = part.timeWeightedAverage {
                weighted += 1
                combined.timeWeightedAverage = average
            }
            guard part.count > 0 else { continue }
            combined.count += part.count
            if let sum = part.sum { combined.sum = (combined.sum ?? 0) + sum }
            if let minimum = part.minimum { combined.minimum = Swift.min(combined.minimum ?? minimum, minimum) }
            if let maximum = part.maximum { combined.maximum = Swift.max(combined.maximum ?? maximum, maximum) }
            if let end = part.mostRecentEnd, combined.mostRecentEnd.map({ end > $0 }) ?? true {
                combined.mostRecentEnd = end
                combined.mostRecent = part.mostRecent
            }
        }
        if weighted > 1 { combined.timeWeightedAverage = nil }
        if let sum = combined.sum, combined.count > 0 { combined.average = sum / Double(combined.count) }
        return combined
    }
}
