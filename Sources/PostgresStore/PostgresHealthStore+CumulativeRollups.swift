import Foundation
import Health
internal import StoreEngine

/// Quarter-hour rollups of cumulative types (``CumulativeRollup``), as in the SQLite engine: kept inside every
/// write transaction (``CumulativeRollupChanges``, applied in a few statements before the commit), read by
/// statistics in buckets aligned to quarter hours (``CumulativeRollupAnswer``), which sweep the raw samples only
/// of the quarters the rollups cannot decide (`docs/store-semantics.md`, item 13).
extension PostgresHealthStore {
    /// Applies the transaction's ``cumulativeChanges`` (from ``flushRollups(_:)``): portions are merged with the
    /// stored rows in Swift (``CumulativeRollupValue/merge(_:)``, the rule written once), read and written back in
    /// one statement each.
    func flushCumulativeRollups(_ connection: PostgresConnection) throws {
        defer { cumulativeChanges.removeAll() }
        guard !cumulativeChanges.isEmpty else { return }
        var keys: [RollupKey] = []
        var values: [CumulativeRollupValue] = []
        for (key, value) in cumulativeChanges.additions {
            keys.append(key)
            values.append(value)
        }
        if !keys.isEmpty {
            let stored = try connection.query(
                """
                SELECT k.i, r.sum, r.shape, r.min_seq, r.max_seq
                FROM unnest($1::integer[], $2::bigint[], $3::integer[], $4::integer[], $5::integer[])
                    WITH ORDINALITY AS k (t, b, so, d, sj, i)
                JOIN cumulative_rollups r ON r.type_id = k.t AND r.bucket_ms = k.b AND r.source_id = k.so
                    AND r.device_id = k.d AND r.subject_id = k.sj
                """, Self.keyArrays(keys))
            for row in 0..<stored.count {
                let index = Int(stored.int64(row, 0)) - 1
                guard values.indices.contains(index) else { continue }
                var value = CumulativeRollupValue(
                    sum: stored.double(row, 1), shape: stored.int64(row, 2), bucket: keys[index].bucket,
                    minSeq: stored.int64(row, 3), maxSeq: stored.int64(row, 4))
                value.merge(values[index])
                values[index] = value
            }
            try writeCumulative(connection, keys, values)
        }
        for key in cumulativeChanges.stale { try recomputeCumulative(connection, key) }
        for (span, delta) in cumulativeChanges.spanChanges {
            let parameters = ["\(span.typeID)", "\(span.start)", "\(span.end)", "\(delta)"]
            try connection.query(
                """
                INSERT INTO cumulative_spans (type_id, start_ms, end_ms, count) VALUES ($1, $2, $3, $4)
                ON CONFLICT (type_id, start_ms, end_ms) DO UPDATE SET count = cumulative_spans.count + excluded.count
                """, parameters)
            try connection.query(
                "DELETE FROM cumulative_spans WHERE type_id = $1 AND start_ms = $2 AND end_ms = $3 AND count <= 0",
                Array(parameters.prefix(3)))
        }
    }

    /// The key columns of `keys` as five array parameters.
    private static func keyArrays(_ keys: [RollupKey]) -> [String?] {
        [
            PostgresText.array(keys.map(\.typeID)), PostgresText.array(keys.map(\.bucket)),
            PostgresText.array(keys.map(\.sourceID)), PostgresText.array(keys.map(\.deviceID)),
            PostgresText.array(keys.map(\.subjectID)),
        ]
    }

    /// Stores the rows of `keys`, replacing what is there.
    private static func writeCumulative(
        _ connection: PostgresConnection, _ keys: [RollupKey], _ values: [CumulativeRollupValue]
    ) throws {
        try connection.query(
            """
            INSERT INTO cumulative_rollups (type_id, bucket_ms, source_id, device_id, subject_id, sum, shape, min_seq,
                max_seq)
            SELECT * FROM unnest($1::integer[], $2::bigint[], $3::integer[], $4::integer[], $5::integer[],
                $6::float8[], $7::bigint[], $8::bigint[], $9::bigint[])
            ON CONFLICT (type_id, bucket_ms, source_id, device_id, subject_id) DO UPDATE SET sum = excluded.sum,
                shape = excluded.shape, min_seq = excluded.min_seq, max_seq = excluded.max_seq
            """,
            keyArrays(keys) + [
                PostgresText.array(values.map(\.sum)),
                PostgresText.array(zip(keys, values).map { $1.shape(bucket: $0.bucket) }),
                PostgresText.array(values.map(\.minSeq)), PostgresText.array(values.map(\.maxSeq)),
            ])
    }

    private func writeCumulative(
        _ connection: PostgresConnection, _ keys: [RollupKey], _ values: [CumulativeRollupValue]
    ) throws {
        try Self.writeCumulative(connection, keys, values)
    }

    /// Rebuilds one stream's quarter hour from the rows that are there now.
    private func recomputeCumulative(_ connection: PostgresConnection, _ key: RollupKey) throws {
        let parameters = ["\(key.typeID)", "\(key.bucket)", "\(key.sourceID)", "\(key.deviceID)", "\(key.subjectID)"]
        let rows = try connection.query(
            """
            SELECT start_ms, end_ms, value, seq FROM samples
            WHERE type_id = $1 AND start_ms >= $2::bigint - \(CumulativeRollup.longestSpread)
                AND start_ms < $2::bigint + \(Rollup.milliseconds) AND end_ms >= $2 AND source_id = $3
                AND device_id = $4 AND subject_id = $5
            """, parameters)
        let points = (0..<rows.count).map {
            CumulativeRollup.Point(
                start: rows.int64($0, 0), end: rows.int64($0, 1), value: rows.double($0, 2), seq: rows.int64($0, 3))
        }
        try connection.query(
            """
            DELETE FROM cumulative_rollups
            WHERE type_id = $1 AND bucket_ms = $2 AND source_id = $3 AND device_id = $4 AND subject_id = $5
            """, parameters)
        guard let value = CumulativeRollup.rebuild(quarter: key.bucket, from: points) else { return }
        try writeCumulative(connection, [key], [value])
    }

    /// After retention removed the samples of `typeID` that ended before `cutoff`: drops the rollups no sample
    /// left can reach, and rebuilds the quarters the samples that remain across the cutoff may still cover.
    func pruneCumulativeRollups(_ connection: PostgresConnection, typeID: Int64, cutoff: Int64) throws {
        let reach = Rollup.bucket(cutoff - CumulativeRollup.longestSpread)
        try connection.query(
            "DELETE FROM cumulative_rollups WHERE type_id = $1 AND bucket_ms < $2", ["\(typeID)", "\(reach)"])
        let partial = try connection.query(
            """
            SELECT source_id, device_id, subject_id, bucket_ms FROM cumulative_rollups
            WHERE type_id = $1 AND bucket_ms <= $2
            """, ["\(typeID)", "\(Rollup.bucket(cutoff))"])
        for row in 0..<partial.count {
            cumulativeChanges.markStale(
                RollupKey(
                    typeID: typeID, sourceID: partial.int64(row, 0), deviceID: partial.int64(row, 1),
                    subjectID: partial.int64(row, 2), bucket: partial.int64(row, 3)))
        }
        try connection.query(
            "DELETE FROM cumulative_spans WHERE type_id = $1 AND end_ms < $2", ["\(typeID)", "\(cutoff)"])
    }

    /// Builds the rollups of every stored cumulative sample (the migration that adds them, on a store that already
    /// holds samples), reading the samples stream by stream through a cursor: the memory held is a page of rows
    /// and about a day of quarters.
    static func buildCumulativeRollups(on connection: PostgresConnection) throws {
        let types = try connection.query("SELECT id, identifier FROM types")
        let cumulative = (0..<types.count).filter {
            types.text($0, 1).flatMap(HealthTypeCatalog.type)?.aggregation == .cumulative
        }.map { types.int64($0, 0) }
        guard !cumulative.isEmpty else { return }
        try connection.run(
            """
            DECLARE cumulative_build NO SCROLL CURSOR FOR
            SELECT type_id, source_id, device_id, subject_id, start_ms, end_ms, value, seq FROM samples
            WHERE type_id = ANY('\(PostgresText.array(cumulative))'::integer[])
            ORDER BY type_id, source_id, device_id, subject_id, start_ms, end_ms
            """)
        var keys: [RollupKey] = []
        var values: [CumulativeRollupValue] = []
        func emit(_ key: RollupKey, _ value: CumulativeRollupValue) throws {
            keys.append(key)
            values.append(value)
            guard keys.count >= 10_000 else { return }
            try writeCumulative(connection, keys, values)
            keys.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
        }
        var builder = CumulativeRollup.Builder()
        while true {
            let page = try connection.rows("FETCH 10000 FROM cumulative_build")
            for row in 0..<page.count {
                let stream = RollupKey(
                    typeID: page.int64(row, 0), sourceID: page.int64(row, 1), deviceID: page.int64(row, 2),
                    subjectID: page.int64(row, 3), bucket: 0)
                try builder.add(
                    CumulativeRollup.Point(
                        start: page.int64(row, 4), end: page.int64(row, 5), value: page.double(row, 6),
                        seq: page.int64(row, 7)), stream: stream, emit: emit)
            }
            if page.count < 10_000 { break }
        }
        try builder.finish(emit: emit)
        if !keys.isEmpty { try writeCumulative(connection, keys, values) }
        try connection.run("CLOSE cumulative_build")
        let spans = Array(builder.spans)
        guard !spans.isEmpty else { return }
        try connection.query(
            """
            INSERT INTO cumulative_spans (type_id, start_ms, end_ms, count)
            SELECT * FROM unnest($1::integer[], $2::bigint[], $3::bigint[], $4::bigint[])
            """,
            [
                PostgresText.array(spans.map(\.key.typeID)), PostgresText.array(spans.map(\.key.start)),
                PostgresText.array(spans.map(\.key.end)), PostgresText.array(spans.map(\.value)),
            ])
    }
}

// MARK: - Statistics from the rollups

extension PostgresHealthStore {
    /// Whether `query` can be answered from cumulative rollups for `caller` (``CumulativeRollupAnswer/fits(_:)``,
    /// and a caller that may read the type: an app that sees only its own samples needs the raw rows).
    func canUseCumulativeRollups(_ connection: PostgresConnection, _ query: StatisticsQuery, _ caller: Caller) throws
        -> Bool
    {
        try CumulativeRollupAnswer.fits(query) && canRead(connection, caller, query.type)
    }

    /// Cumulative statistics per bucket from the rollups (see ``canUseCumulativeRollups(_:_:_:)``); the quarters
    /// they cannot decide are swept from the raw samples.
    func cumulativeRollupStatistics(_ connection: PostgresConnection, _ query: StatisticsQuery) throws
        -> [StatisticsResult]
    {
        guard !query.buckets.isEmpty else { return [] }
        var answer = CumulativeRollupAnswer(
            query, merge: try query.cumulativeMerge { try priority(connection, of: query.type) })
        if let typeID = try existingTypeID(connection, query.type.identifier) {
            let range = ["\(typeID)", "\(answer.to)", "\(answer.from)"]
            // The quarters a long sample crosses are swept, whatever their rollups say.
            let spans = try connection.query(
                "SELECT start_ms, end_ms FROM cumulative_spans WHERE type_id = $1 AND start_ms < $2 AND end_ms > $3",
                range)
            for row in 0..<spans.count { answer.sweep(spanFrom: spans.int64(row, 0), to: spans.int64(row, 1)) }

            var conditions = PostgresConditions()
            conditions.add("r.type_id = ? AND r.bucket_ms < ? AND r.bucket_ms >= ?", range)
            if let sources = query.sources, !sources.isEmpty {
                conditions.add(
                    "r.source_id IN (SELECT id FROM sources WHERE identifier = ANY(?::text[]))",
                    [PostgresText.array(sources)])
            }
            if let devices = query.devices, !devices.isEmpty {
                conditions.add(
                    "r.device_id IN (SELECT id FROM devices WHERE key = ANY(?::text[]))", [PostgresText.array(devices)])
            }
            if let subjects = query.subjects, !subjects.isEmpty {
                conditions.add(
                    "r.subject_id IN (SELECT id FROM subjects WHERE name = ANY(?::text[]))",
                    [PostgresText.array(subjects)])
            }
            func provenance(_ origin: CumulativeRollupAnswer.Origin) throws -> Provenance {
                let named = try connection.query(
                    "SELECT so.identifier, (SELECT key FROM devices WHERE id = $2) FROM sources so WHERE so.id = $1",
                    ["\(origin.source)", "\(origin.device)"])
                guard named.count > 0 else { return Provenance(source: "", device: nil) }
                return Provenance(source: named.text(0, 0) ?? "", device: named.text(0, 1))
            }
            if answer.separate {
                // By source, the server adds each stream's quarters up per query bucket (width_bucket over the
                // bucket borders), leaving out the quarters the sweep answers.
                let borders = query.buckets.map(\.start.milliseconds) + [answer.to]
                let bordersParameter = conditions.parameter(PostgresText.array(borders))
                conditions.add("r.bucket_ms <> ALL(?::bigint[])", [PostgresText.array(answer.sweptQuarterStarts)])
                let rows = try connection.query(
                    """
                    SELECT width_bucket(r.bucket_ms, \(bordersParameter)::bigint[]) AS b, r.source_id, r.device_id,
                        sum(r.sum)
                    FROM cumulative_rollups r WHERE \(conditions.sql) GROUP BY b, r.source_id, r.device_id
                    """, conditions.parameters, binary: true)
                for row in 0..<rows.count {
                    try answer.add(
                        bucket: Int(rows.binaryInteger(row, 0)) - 1,
                        origin: CumulativeRollupAnswer.Origin(
                            source: rows.binaryInteger(row, 1), device: rows.binaryInteger(row, 2)),
                        sum: rows.binaryDouble(row, 3), provenance: provenance)
                }
            } else {
                let rows = try connection.query(
                    """
                    SELECT r.bucket_ms, r.source_id, r.device_id, r.sum, r.subject_id, r.shape, r.min_seq, r.max_seq
                    FROM cumulative_rollups r WHERE \(conditions.sql) ORDER BY r.bucket_ms
                    """, conditions.parameters, binary: true)
                for row in 0..<rows.count {
                    try answer.add(
                        quarter: rows.binaryInteger(row, 0),
                        origin: CumulativeRollupAnswer.Origin(
                            source: rows.binaryInteger(row, 1), device: rows.binaryInteger(row, 2)),
                        sum: rows.binaryDouble(row, 3), subjectID: rows.binaryInteger(row, 4),
                        shape: rows.binaryInteger(row, 5), minSeq: rows.binaryInteger(row, 6),
                        maxSeq: rows.binaryInteger(row, 7), provenance: provenance)
                }
            }
            answer.finishRows()
        }
        for run in answer.sweptRuns {
            guard let partStart = run.borders.first, let partEnd = run.borders.last else { continue }
            let samples = try rows(
                connection, of: query.type, from: partStart, to: partEnd, sources: query.sources,
                devices: query.devices, subjects: query.subjects, caller: .owner
            ).map { StatisticsSample($0.sample, lastModified: $0.seq) }
            answer.addSwept(run, samples: samples)
        }
        let quarters = answer.quarterCounts
        cumulativeQuarters.fromRollups += quarters.fromRollups
        cumulativeQuarters.swept += quarters.swept
        return answer.results()
    }
}
