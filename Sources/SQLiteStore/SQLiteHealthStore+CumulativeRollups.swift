import Foundation
import Health
internal import StoreEngine

/// Quarter-hour rollups of cumulative types (``CumulativeRollup``): kept inside every write transaction, read by
/// statistics in buckets aligned to quarter hours, which sweep the raw samples only of the quarters the rollups
/// cannot decide (`docs/store-semantics.md`, item 13).
extension SQLiteHealthStore {
    /// Applies the transaction's ``cumulativeChanges`` (from ``flushRollups()``).
    func flushCumulativeRollups() throws {
        defer { cumulativeChanges.removeAll() }
        guard !cumulativeChanges.isEmpty else { return }
        // The stored value and the transaction's are merged here (CumulativeRollupValue.merge), not in SQL: one
        // rule for both, and the span and flags stay one packed column.
        let read = try connection.cached(
            """
            SELECT sum, shape, min_seq, max_seq FROM cumulative_rollups
            WHERE type_id = ?1 AND bucket_ms = ?2 AND source_id = ?3 AND device_id = ?4 AND subject_id = ?5
            """)
        let write = try connection.cached(Self.insertCumulative(replacing: true))
        for (key, pending) in cumulativeChanges.additions {
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
        for key in cumulativeChanges.stale { try recomputeCumulative(key) }
        for (span, delta) in cumulativeChanges.spanChanges {
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

    /// Rebuilds one stream's quarter hour from the rows and chunks that are there now.
    private func recomputeCumulative(_ key: RollupKey) throws {
        let quarterEnd = key.bucket + Rollup.milliseconds
        let earliest = key.bucket - CumulativeRollup.longestSpread
        var points: [CumulativeRollup.Point] = []
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
                CumulativeRollup.Point(
                    start: rows.int64(0), end: rows.int64(1), value: rows.double(2), seq: rows.int64(3)))
        }
        for chunk in try chunks(
            typeID: key.typeID, sourceID: key.sourceID, deviceID: key.deviceID, from: earliest, to: quarterEnd)
        where chunk.key.subjectID == key.subjectID {
            for point in chunk.points where point.start >= earliest && point.start < quarterEnd {
                points.append(
                    CumulativeRollup.Point(
                        start: point.start, end: point.start + point.duration, value: point.value, seq: point.seq))
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
        guard let value = CumulativeRollup.rebuild(quarter: key.bucket, from: points) else { return }
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
            cumulativeChanges.markStale(
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
            var streams: [Stream: [CumulativeRollup.Point]] = [:]
            let rows = try connection.prepare(
                "SELECT source_id, device_id, subject_id, start_ms, end_ms, value, seq FROM samples WHERE type_id = ?1")
            try rows.bind(1, typeID)
            while try rows.step() {
                let stream = Stream(
                    typeID: typeID, sourceID: rows.int64(0), deviceID: rows.int64(1), subjectID: rows.int64(2))
                streams[stream, default: []].append(
                    CumulativeRollup.Point(
                        start: rows.int64(3), end: rows.int64(4), value: rows.double(5), seq: rows.int64(6))
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
                        CumulativeRollup.Point(
                            start: point.start, end: point.start + point.duration, value: point.value, seq: point.seq))
                }
            }
            let insert = try connection.prepare(insertCumulative(replacing: false))
            func emit(_ key: RollupKey, _ value: CumulativeRollupValue) throws {
                insert.reset()
                try bindCumulative(insert, key, value)
                try insert.step()
            }
            var builder = CumulativeRollup.Builder()
            for (stream, points) in streams {
                let key = RollupKey(
                    typeID: typeID, sourceID: stream.sourceID, deviceID: stream.deviceID, subjectID: stream.subjectID,
                    bucket: 0)
                for point in points.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
                    try builder.add(point, stream: key, emit: emit)
                }
            }
            try builder.finish(emit: emit)
            let span = try connection.prepare(
                "INSERT INTO cumulative_spans (type_id, start_ms, end_ms, count) VALUES (?1, ?2, ?3, ?4)")
            for (long, count) in builder.spans {
                span.reset()
                try span.bind(1, long.typeID)
                try span.bind(2, long.start)
                try span.bind(3, long.end)
                try span.bind(4, count)
                try span.step()
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

    /// Whether `query` can be answered from cumulative rollups for `caller` (``CumulativeRollupAnswer/fits(_:)``,
    /// and a caller that may read the type: an app that sees only its own samples needs the raw rows).
    func canUseCumulativeRollups(_ query: StatisticsQuery, _ caller: Caller) throws -> Bool {
        try CumulativeRollupAnswer.fits(query) && canRead(caller, query.type)
    }

    /// Cumulative statistics per bucket from the rollups (see ``canUseCumulativeRollups(_:_:)``); the quarters
    /// they cannot decide are swept from the raw samples (``CumulativeRollupAnswer``).
    func cumulativeRollupStatistics(_ query: StatisticsQuery) throws -> [StatisticsResult] {
        guard !query.buckets.isEmpty else { return [] }
        var answer = CumulativeRollupAnswer(query, merge: try query.cumulativeMerge { try priority(of: query.type) })
        let from = answer.from
        let to = answer.to
        let typeID = try existingTypeID(query.type.identifier)
        if let typeID {
            // The quarters a long sample crosses are swept, whatever their rollups say.
            let spans = try connection.cached(
                "SELECT start_ms, end_ms FROM cumulative_spans WHERE type_id = ?1 AND start_ms < ?2 AND end_ms > ?3")
            try spans.bind(1, typeID)
            try spans.bind(2, to)
            try spans.bind(3, from)
            while try spans.step() { answer.sweep(spanFrom: spans.int64(0), to: spans.int64(1)) }

            var conditions = SQLConditions()
            conditions.add(
                "r.type_id = ? AND r.bucket_ms >= ? AND r.bucket_ms < ?",
                [.integer(typeID), .integer(from), .integer(to)])
            addRollupFilters(query, to: &conditions)
            // By source, only the sums are read (SQLite decodes every column a SELECT names, row by row).
            let separate = answer.separate
            let columns =
                separate
                ? "r.bucket_ms, r.source_id, r.device_id, r.sum"
                : """
                r.bucket_ms, r.source_id, r.device_id, r.sum, r.subject_id, r.shape, r.min_seq, r.max_seq
                """
            let statement = try conditions.prepare(
                "SELECT \(columns) FROM cumulative_rollups r WHERE \(conditions.sql) ORDER BY r.bucket_ms",
                on: connection)
            func provenance(_ origin: CumulativeRollupAnswer.Origin) throws -> Provenance {
                try rollupProvenance(source: origin.source, device: origin.device)
            }
            while try statement.step() {
                let origin = CumulativeRollupAnswer.Origin(source: statement.int64(1), device: statement.int64(2))
                if separate {
                    try answer.add(
                        quarter: statement.int64(0), origin: origin, sum: statement.double(3), provenance: provenance)
                } else {
                    try answer.add(
                        quarter: statement.int64(0), origin: origin, sum: statement.double(3),
                        subjectID: statement.int64(4), shape: statement.int64(5), minSeq: statement.int64(6),
                        maxSeq: statement.int64(7), provenance: provenance)
                }
            }
            answer.finishRows()
        }
        for run in answer.sweptRuns {
            guard let partStart = run.borders.first, let partEnd = run.borders.last else { continue }
            let samples = try rows(
                of: query.type, from: partStart, to: partEnd, sources: query.sources, devices: query.devices,
                subjects: query.subjects, caller: .owner,
                notStartingBefore: try earliestStart(
                    typeID: typeID, reaching: partStart.milliseconds, before: partEnd.milliseconds)
            ).map { StatisticsSample($0.sample, lastModified: $0.seq) }
            answer.addSwept(run, samples: samples)
        }
        let quarters = answer.quarterCounts
        cumulativeQuarters.fromRollups += quarters.fromRollups
        cumulativeQuarters.swept += quarters.swept
        return answer.results()
    }
}
