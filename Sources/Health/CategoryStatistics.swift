/// Statistics of category samples (`docs/store-semantics.md`, "Category samples"): per bucket and per value of
/// the enumeration, the time covered and the number of samples. Sleep analysis gives hours in each stage per
/// night; stand hours give the hours stood and idle.
///
/// Time is the union of the samples' intervals clipped to the bucket, per subject, then added over subjects: two
/// sources that both record the same night asleep count it once, two people's nights twice. A sample counts in
/// every bucket its interval overlaps (an instant in the bucket that holds it). Invalid samples (`end < start`)
/// and values outside `Int` are ignored.
public enum CategoryStatistics {
    /// One value's share of a bucket.
    public struct Value: Hashable, Sendable {
        /// The enumeration's integer (`HealthType/values`).
        public var value: Int
        /// Time covered by samples of this value inside the bucket.
        public var milliseconds: Int64
        /// Samples of this value overlapping the bucket.
        public var count: Int

        public init(value: Int, milliseconds: Int64, count: Int) {
            self.value = value
            self.milliseconds = milliseconds
            self.count = count
        }

        public var hours: Double { Double(milliseconds) / 3_600_000 }
    }

    /// Per bucket between consecutive `borders` (sorted), the values that occur, ordered by value.
    public static func buckets(_ samples: [StatisticsSample], borders: [Instant]) -> [[Value]] {
        guard borders.count >= 2 else { return [] }
        let bucketCount = borders.count - 1
        let edges = borders.map(\.milliseconds)
        struct Key: Hashable {
            let bucket: Int
            let value: Int
            let subject: String?
        }
        var intervals: [Key: [(Int64, Int64)]] = [:]
        for sample in samples where sample.isValid {
            guard let value = Int(exactly: sample.value) else { continue }
            let start = sample.start.milliseconds
            let end = sample.end.milliseconds
            // The first bucket whose end is after the start (an instant on a border belongs to the later bucket).
            var low = 0
            var high = bucketCount
            while low < high {
                let middle = (low + high) / 2
                if edges[middle + 1] <= start { low = middle + 1 } else { high = middle }
            }
            var bucket = low
            while bucket < bucketCount, edges[bucket] < end || (start == end && edges[bucket] <= start) {
                let clippedStart = max(start, edges[bucket])
                let clippedEnd = min(end, edges[bucket + 1])
                if clippedStart <= clippedEnd, start == end ? start < edges[bucket + 1] : clippedStart < clippedEnd {
                    intervals[Key(bucket: bucket, value: value, subject: sample.subject), default: []].append(
                        (clippedStart, clippedEnd))
                }
                if start == end { break }
                bucket += 1
            }
        }
        var result = [[Int: Value]](repeating: [:], count: bucketCount)
        for (key, spans) in intervals {
            var covered: Int64 = 0
            var current: (Int64, Int64)?
            for span in spans.sorted(by: { $0.0 < $1.0 }) {
                if let open = current, span.0 <= open.1 {
                    current = (open.0, max(open.1, span.1))
                } else {
                    if let open = current { covered += open.1 - open.0 }
                    current = span
                }
            }
            if let open = current { covered += open.1 - open.0 }
            var entry = result[key.bucket][key.value] ?? Value(value: key.value, milliseconds: 0, count: 0)
            entry.milliseconds += covered
            entry.count += spans.count
            result[key.bucket][key.value] = entry
        }
        return result.map { $0.values.sorted { $0.value < $1.value } }
    }
}
