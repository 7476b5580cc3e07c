import Foundation
import Health
internal import StoreEngine

/// Quarter-hour rollups of cumulative types (``CumulativeRollup``): kept inside every write transaction, read by
/// statistics in buckets aligned to quarter hours, which sweep the raw samples only of the quarters the rollups
/// cannot decide (`docs/store-semantics.md`, item 13).
extension SQLiteHealthStore {
    /// A sample longer than ``CumulativeRollup/longestSpread``: counted per type and span in `cumulative_spans`,
    /// and the quarters it crosses are swept.
    struct CumulativeSpan: Hashable {
        var typeID: Int64
        var start: Int64
        var end: Int64
    }

    /// Remembers an inserted cumulative sample; ``flushCumulativeRollups()`` adds it before the commit.
    func noteCumulativeInserted(
        typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, start: Int64, end: Int64, value: Double,
        seq: Int64
    ) {
        guard CumulativeRollup.isSpread(start: start, end: end) else {
            pendingSpans[CumulativeSpan(typeID: typeID, start: start, end: end), default: 0] += 1
            return
        }
        CumulativeRollup.forEachPortion(start: start, end: end, value: value, seq: seq) { quarter, portion in
            let key = RollupKey(
                typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID, bucket: quarter)
            pendingCumulative[key, default: CumulativeRollupValue()].merge(portion)
        }
    }

    /// Remembers that a cumulative sample went: the quarters it covered are rebuilt from the raw data.
    func noteCumulativeRemoved(
        typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, start: Int64, end: Int64
    ) {
        guard CumulativeRollup.isSpread(start: start, end: end) else {
            pendingSpans[CumulativeSpan(typeID: typeID, start: start, end: end), default: 0] -= 1
            return
        }
        CumulativeRollup.forEachPortion(start: start, end: end, value: 0, seq: 0) { quarter, _ in
            staleCumulative.insert(
                RollupKey(typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID, bucket: quarter)
            )
        }
    }

    /// Applies the remembered changes (from ``flushRollups()``).
    func flushCumulativeRollups() throws {
        defer {
            pendingCumulative.removeAll(keepingCapacity: true)
            staleCumulative.removeAll(keepingCapacity: true)
            pendingSpans.removeAll(keepingCapacity: true)
        }
        if !pendingCumulative.isEmpty {
            // The stored value and the transaction's are merged here (CumulativeRollupValue.merge), not in SQL: one
            // rule for both, and the span and flags stay one packed column.
            let read = try connection.cached(
                """
                SELECT sum, shape, min_seq, max_seq FROM cumulative_rollups
                WHERE type_id = ?1 AND bucket_ms = ?2 AND source_id = ?3 AND device_id = ?4 AND subject_id = ?5
                """)
            let write = try connection.cached(Self.insertCumulative(replacing: true))
            for (key, pending) in pendingCumulative where !staleCumulative.contains(key) {
                read.reset()
                try read.bind(1, key.typeID)
                try read.bind(2, key.bucket)
                try read.bind(3, key.sourceID)
                try read.bind(4, key.deviceID)
                try read.bind(5, key.subjectID)
                var value = pending
                if try read.step() {
                    value = CumulativeRollupValue(
                        sum: read.double(0), shape: read.int64(1), bucket: key.bucket, minSeq: read.int64(2),
                        maxSeq: read.int64(3))
                    value.merge(pending)
                }
                write.reset()
                try Self.bindCumulative(write, key, value)
                try write.step()
            }
        }
        for key in staleCumulative { try recomputeCumulative(key) }
        for (span, delta) in pendingSpans where delta != 0 {
            let change = try connection.cached(
                """
                INSERT INTO cumulative_spans (type_id, start_ms, end_ms, count) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (type_id, start_ms, end_ms) DO UPDATE SET count = count + excluded.count
                """)
            try change.bind(1, span.typeID)
            try change.bind(2, span.start)
            try change.bind(3, span.end)
            try change.bind(4, delta)
            try change.step()
            let empty = try connection.cached(
                "DELETE FROM cumulative_spans WHERE type_id = ?1 AND start_ms = ?2 AND end_ms = ?3 AND count <= 0")
            try empty.bind(1, span.typeID)
            try empty.bind(2, span.start)
            try empty.bind(3, span.end)
            try empty.step()
        }
    }

    /// The statement that stores one rollup row (``bindCumulative(_:_:_:)`` binds it).
    static func insertCumulative(replacing: Bool) -> String {
        """
        INSERT \(replacing ? "OR REPLACE " : "")INTO cumulative_rollups (type_id, bucket_ms, source_id, device_id,
            subject_id, sum, shape, min_seq, max_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
        """
    }

    static func bindCumulative(_ statement: SQLiteStatement, _ key: RollupKey, _ value: CumulativeRollupValue) throws {
        try statement.bind(1, key.typeID)
        try statement.bind(2, key.bucket)
        try statement.bind(3, key.sourceID)
        try statement.bind(4, key.deviceID)
        try statement.bind(5, key.subjectID)
        try statement.bind(6, value.sum)
        try statement.bind(7, value.shape(bucket: key.bucket))
        try statement.bind(8, value.minSeq)
        try statement.bind(9, value.maxSeq)
    }

    /// One stored sample as the rollups see it.
    struct CumulativePoint {
        var start: Int64
        var end: Int64
        var value: Double
        var seq: Int64
    }

    /// Rebuilds one stream's quarter hour from the rows and chunks that are there now.
    private func recomputeCumulative(_ key: RollupKey) throws {
        let quarterEnd = key.bucket + Rollup.milliseconds
        let earliest = key.bucket - CumulativeRollup.longestSpread
        var points: [CumulativePoint] = []
        let rows = try connection.cached(
            """
            SELECT start_ms, end_ms, value, seq FROM samples
            WHERE type_id = ?1 AND start_ms >= ?2 AND start_ms < ?3 AND end_ms >= ?4 AND source_id = ?5
                AND device_id = ?6 AND subject_id = ?7
            """)
        try rows.bind(1, key.typeID)
        try rows.bind(2, earliest)
        try rows.bind(3, quarterEnd)
        try rows.bind(4, key.bucket)
        try rows.bind(5, key.sourceID)
        try rows.bind(6, key.deviceID)
        try rows.bind(7, key.subjectID)
        while try rows.step() {
            points.append(
                CumulativePoint(start: rows.int64(0), end: rows.int64(1), value: rows.double(2), seq: rows.int64(3)))
        }
        for chunk in try chunks(
            typeID: key.typeID, sourceID: key.sourceID, deviceID: key.deviceID, from: earliest, to: quarterEnd)
        where chunk.key.subjectID == key.subjectID {
            for point in chunk.points where point.start >= earliest && point.start < quarterEnd {
                points.append(
                    CumulativePoint(
                        start: point.start, end: point.start + point.duration, value: point.value, seq: point.seq))
            }
        }
        var value = CumulativeRollupValue()
        var any = false
        for point in points.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) })
        where CumulativeRollup.isSpread(start: point.start, end: point.end) {
            CumulativeRollup.forEachPortion(start: point.start, end: point.end, value: point.value, seq: point.seq) {
                quarter, portion in
                guard quarter == key.bucket else { return }
                value.merge(portion)
                any = true
            }
        }
        let delete = try connection.cached(
            """
            DELETE FROM cumulative_rollups
            WHERE type_id = ?1 AND bucket_ms = ?2 AND source_id = ?3 AND device_id = ?4 AND subject_id = ?5
            """)
        try delete.bind(1, key.typeID)
        try delete.bind(2, key.bucket)
        try delete.bind(3, key.sourceID)
        try delete.bind(4, key.deviceID)
        try delete.bind(5, key.subjectID)
        try delete.step()
        guard any else { return }
        let insert = try connection.cached(Self.insertCumulative(replacing: false))
        try Self.bindCumulative(insert, key, value)
        try insert.step()
    }

    /// After retention removed the samples of `typeID` that ended before `cutoff`: drops the rollups no sample
    /// left can reach, and rebuilds the quarters the samples that remain across the cutoff may still cover.
    func pruneCumulativeRollups(typeID: Int64, cutoff: Int64) throws {
        let reach = Rollup.bucket(cutoff - CumulativeRollup.longestSpread)
        let old = try connection.cached("DELETE FROM cumulative_rollups WHERE type_id = ?1 AND bucket_ms < ?2")
        try old.bind(1, typeID)
        try old.bind(2, reach)
        try old.step()
        let partial = try connection.cached(
            """
            SELECT source_id, device_id, subject_id, bucket_ms FROM cumulative_rollups
            WHERE type_id = ?1 AND bucket_ms <= ?2
            """)
        try partial.bind(1, typeID)
        try partial.bind(2, Rollup.bucket(cutoff))
        while try partial.step() {
            staleCumulative.insert(
                RollupKey(
                    typeID: typeID, sourceID: partial.int64(0), deviceID: partial.int64(1),
                    subjectID: partial.int64(2), bucket: partial.int64(3)))
        }
        let spans = try connection.cached("DELETE FROM cumulative_spans WHERE type_id = ?1 AND end_ms < ?2")
        try spans.bind(1, typeID)
        try spans.bind(2, cutoff)
        try spans.step()
    }

    /// Builds the rollups of every stored cumulative sample (the migration that adds them, on a store that already
    /// holds samples).
    static func buildCumulativeRollups(on connection: SQLiteConnection) throws {
        var cumulative: [Int64] = []
        let types = try connection.prepare("SELECT id, identifier FROM types")
        while try types.step() {
            if let identifier = types.text(1), HealthTypeCatalog.type(identifier)?.aggregation == .cumulative {
                cumulative.append(types.int64(0))
            }
        }
        struct Stream: Hashable {
            var typeID: Int64
            var sourceID: Int64
            var deviceID: Int64
            var subjectID: Int64
        }
        for typeID in cumulative {
            var streams: [Stream: [CumulativePoint]] = [:]
            let rows = try connection.prepare(
                "SELECT source_id, device_id, subject_id, start_ms, end_ms, value, seq FROM samples WHERE type_id = ?1")
            try rows.bind(1, typeID)
            while try rows.step() {
                let stream = Stream(
                    typeID: typeID, sourceID: rows.int64(0), deviceID: rows.int64(1), subjectID: rows.int64(2))
                streams[stream, default: []].append(
                    CumulativePoint(start: rows.int64(3), end: rows.int64(4), value: rows.double(5), seq: rows.int64(6))
                )
            }
            let chunks = try connection.prepare(
                "SELECT source_id, device_id, subject_id, data FROM series_chunks WHERE type_id = ?1")
            try chunks.bind(1, typeID)
            while try chunks.step() {
                let stream = Stream(
                    typeID: typeID, sourceID: chunks.int64(0), deviceID: chunks.int64(1), subjectID: chunks.int64(2))
                for point in try SeriesChunkCodec.decode(chunks.blob(3) ?? []) {
                    streams[stream, default: []].append(
                        CumulativePoint(
                            start: point.start, end: point.start + point.duration, value: point.value, seq: point.seq))
                }
            }
            var values: [RollupKey: CumulativeRollupValue] = [:]
            var spans: [Int64: [Int64: Int64]] = [:]  // start → end → count
            for (stream, points) in streams {
                for point in points.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
                    guard CumulativeRollup.isSpread(start: point.start, end: point.end) else {
                        spans[point.start, default: [:]][point.end, default: 0] += 1
                        continue
                    }
                    CumulativeRollup.forEachPortion(
                        start: point.start, end: point.end, value: point.value, seq: point.seq
                    ) { quarter, portion in
                        let key = RollupKey(
                            typeID: typeID, sourceID: stream.sourceID, deviceID: stream.deviceID,
                            subjectID: stream.subjectID, bucket: quarter)
                        values[key, default: CumulativeRollupValue()].merge(portion)
                    }
                }
            }
            let insert = try connection.prepare(insertCumulative(replacing: false))
            for (key, value) in values {
                insert.reset()
                try bindCumulative(insert, key, value)
                try insert.step()
            }
            let span = try connection.prepare(
                "INSERT INTO cumulative_spans (type_id, start_ms, end_ms, count) VALUES (?1, ?2, ?3, ?4)")
            for (start, ends) in spans {
                for (end, count) in ends {
                    span.reset()
                    try span.bind(1, typeID)
                    try span.bind(2, start)
                    try span.bind(3, end)
                    try span.bind(4, count)
                    try span.step()
                }
            }
        }
    }
}

// MARK: - Statistics from the rollups

extension SQLiteHealthStore {
    /// The earliest start a stored sample of a cumulative type can have and still reach `[from, to)`: a day
    /// before `from`, or the start of a longer sample that reaches it.
    private func earliestStart(typeID: Int64?, reaching from: Int64, before to: Int64) throws -> Int64 {
        let spread = from - CumulativeRollup.longestSpread
        guard let typeID else { return spread }
        let longest = try connection.cached(
            "SELECT min(start_ms) FROM cumulative_spans WHERE type_id = ?1 AND start_ms < ?2 AND end_ms >= ?3")
        try longest.bind(1, typeID)
        try longest.bind(2, to)
        try longest.bind(3, from)
        guard try longest.step(), !longest.isNull(0) else { return spread }
        return min(spread, longest.int64(0))
    }

    /// The longest range answered from cumulative rollups, in quarter hours (30 years): the answer keeps a few
    /// bytes per quarter; a longer range is swept, whose memory follows the samples, not the range.
    static let maximumRollupQuarters: Int64 = 30 * 365 * 96

    /// Whether `query` can be answered from cumulative rollups for `caller`: buckets on quarter-hour borders over at
    /// most ``maximumRollupQuarters``, and a caller that may read the type (an app that sees only its own samples
    /// needs the raw rows).
    func canUseCumulativeRollups(_ query: StatisticsQuery, _ caller: Caller) throws -> Bool {
        guard !query.exact, query.type.aggregation == .cumulative, let first = query.buckets.first,
            let last = query.buckets.last,
            last.end.milliseconds - first.start.milliseconds <= Self.maximumRollupQuarters * Rollup.milliseconds,
            try canRead(caller, query.type)
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

    /// Cumulative statistics per bucket from the rollups (see ``canUseCumulativeRollups(_:_:)``); the quarters
    /// they cannot decide are swept from the raw samples.
    ///
    /// Streams are numbered as their rows come (``CumulativeRollup/Entry/stream``), so that the loop over the rows
    /// hashes and allocates nothing per quarter; each quarter's answer goes straight into its query bucket.
    func cumulativeRollupStatistics(_ query: StatisticsQuery) throws -> [StatisticsResult] {
        guard let first = query.buckets.first, let last = query.buckets.last else { return [] }
        let from = first.start.milliseconds
        let to = last.end.milliseconds
        let quarterCount = Int((to - from) / Rollup.milliseconds)
        let merge = try query.cumulativeMerge { try priority(of: query.type) }
        let separate = query.separateBySource
        let bucketCount = query.buckets.count

        // The query bucket of each quarter.
        var bucketOf = [Int32](repeating: 0, count: quarterCount)
        var quarter = 0
        for (index, bucket) in query.buckets.enumerated() {
            let quarters = Int((bucket.end.milliseconds - bucket.start.milliseconds) / Rollup.milliseconds)
            for _ in 0..<quarters {
                bucketOf[quarter] = Int32(index)
                quarter += 1
            }
        }
        // The streams met so far, by number, and the merge's rank of each.
        var provenances: [Provenance] = []
        var ranks: [Int?] = []
        var numbers: [Provenance: Int] = [:]
        func number(_ provenance: Provenance) -> Int {
            if let known = numbers[provenance] { return known }
            numbers[provenance] = provenances.count
            provenances.append(provenance)
            ranks.append(merge.contenderRank(provenance))
            return provenances.count - 1
        }
        // Per bucket: the merged sum, the streams that won (a bit each, below 64) and any other winning
        // provenance; or, by source, the sum per stream.
        var sums = [Double?](repeating: nil, count: separate ? 0 : bucketCount)
        var winners = [UInt64](repeating: 0, count: separate ? 0 : bucketCount)
        var otherWinners: [Int: Set<Provenance>] = [:]
        var streamSums = [[Double?]](repeating: [], count: separate ? bucketCount : 0)
        func addStreamSum(_ sum: Double, bucket: Int, stream: Int) {
            if streamSums[bucket].count <= stream {
                streamSums[bucket].append(contentsOf: repeatElement(nil, count: stream + 1 - streamSums[bucket].count))
            }
            streamSums[bucket][stream] = (streamSums[bucket][stream] ?? 0) + sum
        }
        var swept = [Bool](repeating: false, count: quarterCount)

        let typeID = try existingTypeID(query.type.identifier)
        if let typeID {
            // The quarters a long sample crosses are swept, whatever their rollups say.
            let spans = try connection.cached(
                "SELECT start_ms, end_ms FROM cumulative_spans WHERE type_id = ?1 AND start_ms < ?2 AND end_ms > ?3")
            try spans.bind(1, typeID)
            try spans.bind(2, to)
            try spans.bind(3, from)
            while try spans.step() {
                var at = max(from, Rollup.bucket(spans.int64(0)))
                let end = min(to, spans.int64(1))
                while at < end {
                    swept[Int((at - from) / Rollup.milliseconds)] = true
                    at += Rollup.milliseconds
                }
            }

            var conditions = SQLConditions()
            conditions.add(
                "r.type_id = ? AND r.bucket_ms >= ? AND r.bucket_ms < ?",
                [.integer(typeID), .integer(from), .integer(to)])
            addRollupFilters(query, to: &conditions)
            // By source, only the sums are read (SQLite decodes every column a SELECT names, row by row).
            let columns =
                separate
                ? "r.bucket_ms, r.source_id, r.device_id, r.sum"
                : """
                r.bucket_ms, r.source_id, r.device_id, r.sum, r.subject_id, r.shape, r.min_seq, r.max_seq
                """
            let statement = try conditions.prepare(
                "SELECT \(columns) FROM cumulative_rollups r WHERE \(conditions.sql) ORDER BY r.bucket_ms",
                on: connection)
            struct Origin: Hashable {
                var source: Int64
                var device: Int64
            }
            var streams: [Origin: Int] = [:]
            var recent: [(origin: Origin, stream: Int)] = []
            var entries: [CumulativeRollup.Entry] = []
            var current = -1
            func decide() {
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
            while try statement.step() {
                let bucketStart = statement.int64(0)
                let at = Int((bucketStart - from) / Rollup.milliseconds)
                if at != current {
                    if !separate { decide() }
                    current = at
                }
                guard !swept[at] else { continue }
                let origin = Origin(source: statement.int64(1), device: statement.int64(2))
                // The first few origins are found by a look along a list (no hashing in the row loop).
                var stream = -1
                for known in recent where known.origin == origin {
                    stream = known.stream
                    break
                }
                if stream < 0 {
                    if let known = streams[origin] {
                        stream = known
                    } else {
                        stream = number(try rollupProvenance(source: origin.source, device: origin.device))
                        streams[origin] = stream
                        if recent.count < 8 { recent.append((origin, stream)) }
                    }
                }
                if separate {
                    addStreamSum(statement.double(3), bucket: Int(bucketOf[at]), stream: stream)
                    continue
                }
                entries.append(
                    CumulativeRollup.Entry(
                        stream: stream, subjectID: statement.int64(4),
                        value: CumulativeRollupValue(
                            sum: statement.double(3), shape: statement.int64(5), bucket: bucketStart,
                            minSeq: statement.int64(6), maxSeq: statement.int64(7))))
            }
            if !separate { decide() }
        }

        // The swept quarters, in runs (neighbours a little apart share one read).
        var runs: [Range<Int>] = []
        for quarter in 0..<quarterCount where swept[quarter] {
            if let lastRun = runs.last, quarter - lastRun.upperBound <= 4 {
                runs[runs.count - 1] = lastRun.lowerBound..<(quarter + 1)
            } else {
                runs.append(quarter..<(quarter + 1))
            }
        }
        let sweptCount = swept.count(where: { $0 })
        cumulativeQuarters.swept += sweptCount
        cumulativeQuarters.fromRollups += quarterCount - sweptCount
        for run in runs {
            let borders = (run.lowerBound...run.upperBound).map {
                Instant(milliseconds: from + Int64($0) * Rollup.milliseconds)
            }
            guard let partStart = borders.first, let partEnd = borders.last else { continue }
            let samples = try rows(
                of: query.type, from: partStart, to: partEnd, sources: query.sources, devices: query.devices,
                subjects: query.subjects, caller: .owner,
                notStartingBefore: try earliestStart(
                    typeID: typeID, reaching: partStart.milliseconds, before: partEnd.milliseconds)
            ).map { StatisticsSample($0.sample, lastModified: $0.seq) }
            // Only the swept quarters of the run count: the others were decided from their rollups.
            if separate {
                for (quarter, part) in zip(run, CumulativeMerge.separateBySource(samples, borders: borders))
                where swept[quarter] {
                    for (provenance, sum) in part.sums {
                        addStreamSum(sum, bucket: Int(bucketOf[quarter]), stream: number(provenance))
                    }
                }
            } else {
                for (quarter, part) in zip(run, merge.buckets(samples, borders: borders)) where swept[quarter] {
                    let bucket = Int(bucketOf[quarter])
                    if let sum = part.sum { sums[bucket] = (sums[bucket] ?? 0) + sum }
                    if !part.sources.isEmpty { otherWinners[bucket, default: []].formUnion(part.sources) }
                }
            }
        }

        var results: [StatisticsResult] = []
        results.reserveCapacity(bucketCount)
        for (index, bucket) in query.buckets.enumerated() {
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
