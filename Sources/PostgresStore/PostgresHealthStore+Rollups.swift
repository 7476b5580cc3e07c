import Foundation
import Health
internal import StoreEngine

/// 15-minute rollups of discrete types, as in the SQLite engine: maintained inside every write transaction
/// (inserts add to their quarter hour; deletions recompute it from the rows), read by long-range statistics, which
/// PostgreSQL aggregates into the query's buckets itself (`width_bucket` over the bucket borders).
extension PostgresHealthStore {
    func noteInserted(_ key: RollupKey, start: Int64, end: Int64, value: Double) {
        pendingRollups[key, default: RollupValue()].add(start: start, end: end, value: value)
    }

    /// Applies the remembered changes in one statement each (called by ``writeTransaction(_:)`` before it commits).
    func flushRollups(_ connection: PostgresConnection) throws {
        guard !pendingRollups.isEmpty || !staleRollups.isEmpty || !cumulativeChanges.isEmpty else { return }
        defer {
            pendingRollups.removeAll(keepingCapacity: true)
            staleRollups.removeAll(keepingCapacity: true)
        }
        let added = pendingRollups.filter { !staleRollups.contains($0.key) }
        if !added.isEmpty {
            let keys = Array(added.keys)
            let values = keys.map { added[$0] ?? RollupValue() }
            try connection.query(
                """
                INSERT INTO rollups (type_id, bucket_ms, source_id, device_id, subject_id, n, sum, min, max,
                    recent_start, recent_end, recent_value)
                SELECT * FROM unnest($1::integer[], $2::bigint[], $3::integer[], $4::integer[], $5::integer[],
                    $6::bigint[], $7::float8[], $8::float8[], $9::float8[], $10::bigint[], $11::bigint[], $12::float8[])
                ON CONFLICT (type_id, bucket_ms, source_id, device_id, subject_id) DO UPDATE SET
                    n = rollups.n + excluded.n, sum = rollups.sum + excluded.sum,
                    min = least(rollups.min, excluded.min), max = greatest(rollups.max, excluded.max),
                    recent_value = CASE WHEN (excluded.recent_end, excluded.recent_start)
                        > (rollups.recent_end, rollups.recent_start)
                        THEN excluded.recent_value ELSE rollups.recent_value END,
                    recent_start = CASE WHEN (excluded.recent_end, excluded.recent_start)
                        > (rollups.recent_end, rollups.recent_start)
                        THEN excluded.recent_start ELSE rollups.recent_start END,
                    recent_end = greatest(rollups.recent_end, excluded.recent_end)
                """,
                [
                    PostgresText.array(keys.map(\.typeID)), PostgresText.array(keys.map(\.bucket)),
                    PostgresText.array(keys.map(\.sourceID)), PostgresText.array(keys.map(\.deviceID)),
                    PostgresText.array(keys.map(\.subjectID)), PostgresText.array(values.map(\.n)),
                    PostgresText.array(values.map(\.sum)), PostgresText.array(values.map(\.min)),
                    PostgresText.array(values.map(\.max)), PostgresText.array(values.map(\.recentStart)),
                    PostgresText.array(values.map(\.recentEnd)), PostgresText.array(values.map(\.recentValue)),
                ])
        }
        for key in staleRollups { try recomputeRollup(connection, key) }
        try flushCumulativeRollups(connection)
    }

    /// Rebuilds one quarter hour of one stream from the rows that are there now.
    private func recomputeRollup(_ connection: PostgresConnection, _ key: RollupKey) throws {
        let parameters = ["\(key.typeID)", "\(key.bucket)", "\(key.sourceID)", "\(key.deviceID)", "\(key.subjectID)"]
        try connection.query(
            """
            DELETE FROM rollups
            WHERE type_id = $1 AND bucket_ms = $2 AND source_id = $3 AND device_id = $4 AND subject_id = $5
            """, parameters)
        try connection.query(
            """
            INSERT INTO rollups (type_id, bucket_ms, source_id, device_id, subject_id, n, sum, min, max, recent_start,
                recent_end, recent_value)
            SELECT $1, $2, $3, $4, $5, count(*), sum(value), min(value), max(value),
                (array_agg(start_ms ORDER BY end_ms DESC, start_ms DESC))[1], max(end_ms),
                (array_agg(value ORDER BY end_ms DESC, start_ms DESC))[1]
            FROM samples
            WHERE type_id = $1 AND start_ms >= $2 AND start_ms < $2 + \(Rollup.milliseconds) AND source_id = $3
                AND device_id = $4 AND subject_id = $5
            HAVING count(*) > 0
            """, parameters)
    }

    /// Whether `query` can be answered from rollups for `caller`.
    func canUseRollups(_ connection: PostgresConnection, _ query: StatisticsQuery, _ caller: Caller) throws -> Bool {
        guard !query.exact, query.type.aggregation == .discrete, let first = query.buckets.first,
            let last = query.buckets.last, last.end.milliseconds - first.start.milliseconds >= 2 * 86_400_000,
            try canRead(connection, caller, query.type)  // an app that sees only its own samples needs the rows
        else { return false }
        return query.buckets.allSatisfy {
            $0.start.milliseconds % Rollup.milliseconds == 0 && $0.end.milliseconds % Rollup.milliseconds == 0
        }
    }

    /// Discrete statistics per bucket from the rollups (see ``canUseRollups(_:_:_:)``), aggregated by the server.
    func rollupStatistics(_ connection: PostgresConnection, _ query: StatisticsQuery) throws -> [StatisticsResult] {
        guard let typeID = try existingTypeID(connection, query.type.identifier), let last = query.buckets.last else {
            return query.buckets.map { StatisticsResult(bucket: $0, discrete: Self.emptyDiscrete($0)) }
        }
        let borders = query.buckets.map(\.start.milliseconds) + [last.end.milliseconds]
        var conditions = PostgresConditions()
        conditions.add(
            "r.type_id = ? AND r.bucket_ms >= ? AND r.bucket_ms < ?",
            ["\(typeID)", "\(borders[0])", "\(last.end.milliseconds)"])
        conditions.add("so.identifier", in: query.sources)
        conditions.add("d.key", in: query.devices)
        conditions.add("sj.name", in: query.subjects)
        let bordersParameter = conditions.parameter(PostgresText.array(borders))
        let provenance = query.separateBySource ? ", so.identifier, d.key" : ""
        let rows = try connection.query(
            """
            SELECT width_bucket(r.bucket_ms, \(bordersParameter)::bigint[]) AS b, sum(r.n), sum(r.sum), min(r.min),
                max(r.max), max(r.recent_end),
                (array_agg(r.recent_value ORDER BY r.recent_end DESC, r.recent_start DESC))[1]\(provenance)
            FROM rollups r
            JOIN sources so ON so.id = r.source_id
            LEFT JOIN devices d ON d.id = r.device_id
            LEFT JOIN subjects sj ON sj.id = r.subject_id
            WHERE \(conditions.sql)
            GROUP BY b\(provenance)
            """, conditions.parameters)
        var totals: [Provenance?: [Int: DiscreteStatistics.Bucket]] = [:]
        for row in 0..<rows.count {
            let index = Int(rows.int64(row, 0)) - 1
            guard query.buckets.indices.contains(index) else { continue }
            let bucket = query.buckets[index]
            let n = rows.int64(row, 1)
            let sum = rows.double(row, 2)
            let statistics = DiscreteStatistics.Bucket(
                start: bucket.start, end: bucket.end, count: Int(n), sum: sum, average: sum / Double(n),
                minimum: rows.double(row, 3), maximum: rows.double(row, 4), mostRecent: rows.double(row, 6),
                mostRecentEnd: Instant(milliseconds: rows.int64(row, 5)), timeWeightedAverage: nil)
            let provenance: Provenance? =
                query.separateBySource ? Provenance(source: rows.text(row, 7) ?? "", device: rows.text(row, 8)) : nil
            totals[provenance, default: [:]][index] = statistics
        }
        if !query.separateBySource {
            let values = totals[nil] ?? [:]
            return query.buckets.enumerated().map { index, bucket in
                StatisticsResult(bucket: bucket, discrete: values[index] ?? Self.emptyDiscrete(bucket))
            }
        }
        return totals.keys.compactMap { $0 }.sorted().flatMap { provenance in
            (totals[provenance] ?? [:]).sorted { $0.key < $1.key }.map {
                StatisticsResult(bucket: query.buckets[$0.key], provenance: provenance, discrete: $0.value)
            }
        }
    }

    static func emptyDiscrete(_ bucket: StatisticsBucket) -> DiscreteStatistics.Bucket {
        DiscreteStatistics.Bucket(
            start: bucket.start, end: bucket.end, count: 0, sum: nil, average: nil, minimum: nil, maximum: nil,
            mostRecent: nil, mostRecentEnd: nil, timeWeightedAverage: nil)
    }
}

/// A WHERE clause built from conditions with `?` placeholders, numbered `$1, $2, ...` in order, and the values to
/// pass. Lists are one array parameter (`= ANY($n)`), so the SQL text, and its prepared statement, stays the same
/// whatever the list holds.
struct PostgresConditions {
    private(set) var clauses: [String] = []
    private(set) var parameters: [String?] = []

    mutating func add(_ condition: String, _ values: [String?]) {
        let pieces = condition.split(separator: "?", omittingEmptySubsequences: false)
        var text = pieces.first.map(String.init) ?? ""
        for (value, piece) in zip(values, pieces.dropFirst()) {
            text += parameter(value) + piece
        }
        clauses.append(text)
    }

    /// Adds `column = ANY(...)` when `values` is given and not empty.
    mutating func add(_ column: String, in values: [String]?) {
        guard let values, !values.isEmpty else { return }
        add("\(column) = ANY(?::text[])", [PostgresText.array(values)])
    }

    /// Adds `column = ANY(ARRAY(<select> = ANY(...)))` when `values` is given and not empty: `column` holds the id
    /// of a row of a dimension table that `select` (`SELECT id FROM sources WHERE identifier`) finds by one of
    /// `values`. The ids are looked up once per statement, and the condition stays one on `samples`' own column.
    mutating func add(_ column: String, ids select: String, in values: [String]?) {
        guard let values, !values.isEmpty else { return }
        add("\(column) = ANY(ARRAY(\(select) = ANY(?::text[])))", [PostgresText.array(values)])
    }

    /// Adds a value and returns its placeholder.
    mutating func parameter(_ value: String?) -> String {
        parameters.append(value)
        return "$\(parameters.count)"
    }

    var sql: String { clauses.isEmpty ? "true" : clauses.joined(separator: " AND ") }
}
