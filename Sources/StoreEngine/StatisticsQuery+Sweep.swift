public import Health

/// The exact sweep over raw samples that both engines run when rollups cannot answer.
extension StatisticsQuery {
    /// The instant before which samples still matter: a discrete value holds for `maxHoldMilliseconds` into the
    /// first bucket (the time-weighted average), so the sweep reads that much earlier.
    public var sweepStart: Instant? {
        guard let first = buckets.first else { return nil }
        let hold = type.aggregation == .discrete ? max(0, maxHoldMilliseconds) : 0
        return first.start.adding(milliseconds: -hold)
    }

    /// The merge of a cumulative type: the query's own priority list (gap-filling unless it says otherwise), else
    /// `priority()`, the stored priority of the type, and its unranked policy.
    public func cumulativeMerge(priority storedPriority: () throws -> SourcePriority) rethrows -> CumulativeMerge {
        let stored = priority == nil ? try storedPriority() : SourcePriority.none
        return CumulativeMerge(
            priority: priority ?? stored.order, unranked: unranked ?? (priority == nil ? stored.unranked : .gapFill))
    }

    /// Statistics per bucket from `samples` (all the caller may read in the range): merged sums for cumulative
    /// types (with `priority()`, the stored priority of the type, unless the query brings its own), or per provenance;
    /// count/avg/min/max/recent/twa for discrete ones, time and count per value for categories, per provenance
    /// when asked.
    public func sweep(
        _ samples: [StatisticsSample], priority storedPriority: () throws -> SourcePriority
    ) rethrows -> [StatisticsResult] {
        guard let last = buckets.last else { return [] }
        var borders = buckets.map(\.start)
        borders.append(last.end)
        switch type.aggregation {
        case .cumulative:
            if separateBySource {
                let merged = CumulativeMerge.separateBySource(samples, borders: borders)
                return zip(buckets, merged).flatMap { bucket, merged in
                    merged.sums.sorted { $0.key < $1.key }.map {
                        StatisticsResult(bucket: bucket, provenance: $0.key, sum: $0.value, sources: [$0.key])
                    }
                }
            }
            let merge = try cumulativeMerge(priority: storedPriority)
            return zip(buckets, merge.buckets(samples, borders: borders)).map { bucket, merged in
                StatisticsResult(bucket: bucket, sum: merged.sum, sources: merged.sources.sorted())
            }
        case .discrete, .series:
            let statistics = DiscreteStatistics(maxHoldMilliseconds: maxHoldMilliseconds)
            if separateBySource {
                let byProvenance = Dictionary(grouping: samples, by: \.provenance)
                return byProvenance.keys.sorted().flatMap { provenance in
                    zip(buckets, statistics.buckets(byProvenance[provenance] ?? [], borders: borders))
                        .filter { $0.1.count > 0 }
                        .map { StatisticsResult(bucket: $0.0, provenance: provenance, discrete: $0.1) }
                }
            }
            return zip(buckets, statistics.buckets(samples, borders: borders)).map {
                StatisticsResult(bucket: $0.0, discrete: $0.1)
            }
        case .category:
            if separateBySource {
                let byProvenance = Dictionary(grouping: samples, by: \.provenance)
                return byProvenance.keys.sorted().flatMap { provenance in
                    zip(buckets, CategoryStatistics.buckets(byProvenance[provenance] ?? [], borders: borders))
                        .filter { !$0.1.isEmpty }
                        .map { StatisticsResult(bucket: $0.0, provenance: provenance, categories: $0.1) }
                }
            }
            return zip(buckets, CategoryStatistics.buckets(samples, borders: borders)).map {
                StatisticsResult(bucket: $0.0, categories: $0.1)
            }
        case .notAggregated:
            return []
        }
    }
}
