import Foundation
import Health
internal import StoreEngine

/// 15-minute rollups of discrete types: maintained inside every write transaction, read by long-range
/// statistics (`docs/store-semantics.md`, item 13). Only mergeable aggregates are kept: count, sum, min, max and
/// the most recent.
extension SQLiteHealthStore {
    /// Remembers an inserted discrete sample; ``flushRollups()`` adds it at the end of the write transaction.
    func noteInserted(
        typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, start: Int64, end: Int64, value: Double
    ) {
        let key = RollupKey(
            typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID,
            bucket: Rollup.bucket(start))
        pendingRollups[key, default: RollupValue()].add(start: start, end: end, value: value)
    }

    /// Remembers that a sample starting at `start` was removed: its quarter hour is recomputed from the raw data.
    func noteRemoved(typeID: Int64, sourceID: Int64, deviceID: Int64, subjectID: Int64, start: Int64) {
        staleRollups.insert(
            RollupKey(
                typeID: typeID, sourceID: sourceID, deviceID: deviceID, subjectID: subjectID,
                bucket: Rollup.bucket(start)))
    }

    /// Applies the remembered changes (called by ``writeTransaction(_:)`` before it commits): the quarter hours
    /// first, then the UTC days they lie in (added to, or rebuilt from the quarter hours when one was removed).
    func flushRollups() throws {
        defer {
            pendingRollups.removeAll(keepingCapacity: true)
            staleRollups.removeAll(keepingCapacity: true)
            staleDayRollups.removeAll(keepingCapacity: true)
        }
        var staleDays = staleDayRollups
        for key in staleRollups { staleDays.insert(key.day) }
        var days: [RollupKey: RollupValue] = [:]
        let upsert = try connection.cached(Self.rollupUpsert(table: "rollups", bucket: "bucket_ms"))
        for (key, value) in pendingRollups where !staleRollups.contains(key) {
            upsert.reset()
            try Self.bindRollup(upsert, key, value)
            try upsert.step()
            let day = key.day
            if !staleDays.contains(day) { days[day, default: RollupValue()].merge(value) }
        }
        for key in staleRollups { try recomputeRollup(key) }
        let dayUpsert = try connection.cached(Self.rollupUpsert(table: "day_rollups", bucket: "day_ms"))
        for (key, value) in days {
            dayUpsert.reset()
            try Self.bindRollup(dayUpsert, key, value)
            try dayUpsert.step()
        }
        for key in staleDays { try recomputeDayRollup(key) }
        try flushCumulativeRollups()
    }

    /// Adds one stream's aggregates to its row of `table` (the quarter hours' or the days'), or makes the row.
    private static func rollupUpsert(table: String, bucket: String) -> String {
        """
        INSERT INTO \(table) (type_id, \(bucket), source_id, device_id, subject_id, n, sum, min, max, recent_start,
            recent_end, recent_value)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
        ON CONFLICT (type_id, \(bucket), source_id, device_id, subject_id) DO UPDATE SET
            n = n + excluded.n, sum = sum + excluded.sum, min = min(min, excluded.min), max = max(max, excluded.max),
            recent_value = CASE WHEN (excluded.recent_end, excluded.recent_start) > (recent_end, recent_start)
                THEN excluded.recent_value ELSE recent_value END,
            recent_start = CASE WHEN (excluded.recent_end, excluded.recent_start) > (recent_end, recent_start)
                THEN excluded.recent_start ELSE recent_start END,
            recent_end = max(recent_end, excluded.recent_end)
        """
    }

    private static func bindRollup(_ statement: SQLiteStatement, _ key: RollupKey, _ value: RollupValue) throws {
        try statement.bind(1, key.typeID)
        try statement.bind(2, key.bucket)
        try statement.bind(3, key.sourceID)
        try statement.bind(4, key.deviceID)
        try statement.bind(5, key.subjectID)
        try statement.bind(6, value.n)
        try statement.bind(7, value.sum)
        try statement.bind(8, value.min)
        try statement.bind(9, value.max)
        try statement.bind(10, value.recentStart)
        try statement.bind(11, value.recentEnd)
        try statement.bind(12, value.recentValue)
    }

    /// Rebuilds one quarter hour of one stream from the rows and chunks that are there now.
    private func recomputeRollup(_ key: RollupKey) throws {
        let end = key.bucket + Rollup.milliseconds
        var value = RollupValue()
        let rows = try connection.cached(
            """
            SELECT start_ms, end_ms, value FROM samples
            WHERE type_id = ?1 AND start_ms >= ?2 AND start_ms < ?3 AND source_id = ?4 AND device_id = ?5
                AND subject_id = ?6
            """)
        try rows.bind(1, key.typeID)
        try rows.bind(2, key.bucket)
        try rows.bind(3, end)
        try rows.bind(4, key.sourceID)
        try rows.bind(5, key.deviceID)
        try rows.bind(6, key.subjectID)
        while try rows.step() { value.add(start: rows.int64(0), end: rows.int64(1), value: rows.double(2)) }
        for chunk in try chunks(
            typeID: key.typeID, sourceID: key.sourceID, deviceID: key.deviceID, from: key.bucket, to: end)
        where chunk.key.subjectID == key.subjectID {
            for point in chunk.points where point.start >= key.bucket && point.start < end {
                value.add(start: point.start, end: point.start + point.duration, value: point.value)
            }
        }
        try replaceRollup(table: "rollups", bucket: "bucket_ms", key, value)
    }

    /// Rebuilds one UTC day of one stream from its quarter hours (after these were brought up to date).
    private func recomputeDayRollup(_ key: RollupKey) throws {
        let quarters = try connection.cached(
            """
            SELECT n, sum, min, max, recent_start, recent_end, recent_value FROM rollups
            WHERE type_id = ?1 AND bucket_ms >= ?2 AND bucket_ms < ?3 AND source_id = ?4 AND device_id = ?5
                AND subject_id = ?6
            """)
        try quarters.bind(1, key.typeID)
        try quarters.bind(2, key.bucket)
        try quarters.bind(3, key.bucket + Rollup.dayMilliseconds)
        try quarters.bind(4, key.sourceID)
        try quarters.bind(5, key.deviceID)
        try quarters.bind(6, key.subjectID)
        var value = RollupValue()
        while try quarters.step() { value.merge(Self.rollupValue(quarters, from: 0)) }
        try replaceRollup(table: "day_rollups", bucket: "day_ms", key, value)
    }

    /// Puts `value` as the row of `key` in `table`, or removes the row when `value` holds nothing.
    private func replaceRollup(table: String, bucket: String, _ key: RollupKey, _ value: RollupValue) throws {
        let delete = try connection.cached(
            """
            DELETE FROM \(table)
            WHERE type_id = ?1 AND \(bucket) = ?2 AND source_id = ?3 AND device_id = ?4 AND subject_id = ?5
            """)
        try delete.bind(1, key.typeID)
        try delete.bind(2, key.bucket)
        try delete.bind(3, key.sourceID)
        try delete.bind(4, key.deviceID)
        try delete.bind(5, key.subjectID)
        try delete.step()
        guard value.n > 0 else { return }
        let insert = try connection.cached(
            """
            INSERT INTO \(table) (type_id, \(bucket), source_id, device_id, subject_id, n, sum, min, max, recent_start,
                recent_end, recent_value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            """)
        try Self.bindRollup(insert, key, value)
        try insert.step()
    }

    /// The aggregates of a rollup row whose `n, sum, min, max, recent_start, recent_end, recent_value` begin at
    /// column `first`.
    static func rollupValue(_ row: SQLiteStatement, from first: Int32) -> RollupValue {
        var value = RollupValue()
        value.n = row.int64(first)
        value.sum = row.double(first + 1)
        value.min = row.double(first + 2)
        value.max = row.double(first + 3)
        value.recentStart = row.int64(first + 4)
        value.recentEnd = row.int64(first + 5)
        value.recentValue = row.double(first + 6)
        return value
    }

    /// Builds the day rollups from the quarter hours' (the migration that adds them).
    static func buildDayRollups(on connection: SQLiteConnection) throws {
        let quarters = try connection.prepare(
            """
            SELECT type_id, bucket_ms, source_id, device_id, subject_id, n, sum, min, max, recent_start, recent_end,
                recent_value
            FROM rollups
            """)
        var days: [RollupKey: RollupValue] = [:]
        while try quarters.step() {
            let key = RollupKey(
                typeID: quarters.int64(0), sourceID: quarters.int64(2), deviceID: quarters.int64(3),
                subjectID: quarters.int64(4), bucket: Rollup.day(quarters.int64(1)))
            days[key, default: RollupValue()].merge(rollupValue(quarters, from: 5))
        }
        let insert = try connection.prepare(rollupUpsert(table: "day_rollups", bucket: "day_ms"))
        for (key, value) in days {
            insert.reset()
            try Self.bindRollup(insert, key, value)
            try insert.step()
        }
    }

    /// Whether `query` can be answered from rollups for `caller`.
    func canUseRollups(_ query: StatisticsQuery, _ caller: Caller) throws -> Bool {
        guard !query.exact, query.type.aggregation == .discrete, let first = query.buckets.first,
            let last = query.buckets.last, last.end.milliseconds - first.start.milliseconds >= 2 * 86_400_000,
            try canRead(caller, query.type)  // an app that sees only its own samples needs the raw rows
        else { return false }
        return query.buckets.allSatisfy {
            $0.start.milliseconds % Rollup.milliseconds == 0 && $0.end.milliseconds % Rollup.milliseconds == 0
        }
    }

    /// The query's source, device and subject filters on rollup rows `r`: as subqueries, so that the rows carry
    /// ids and the provenance is named once per source and device (a year of rollups is 35,040 rows per source, and
    /// a join and two strings per row were most of a query's time).
    func addRollupFilters(_ query: StatisticsQuery, to conditions: inout SQLConditions) {
        if let sources = query.sources, !sources.isEmpty {
            conditions.add(
                "r.source_id IN (SELECT id FROM sources WHERE identifier IN (\(Self.marks(sources))))",
                sources.map(Binding.text))
        }
        if let devices = query.devices, !devices.isEmpty {
            conditions.add(
                "r.device_id IN (SELECT id FROM devices WHERE key IN (\(Self.marks(devices))))",
                devices.map(Binding.text))
        }
        if let subjects = query.subjects, !subjects.isEmpty {
            conditions.add(
                "r.subject_id IN (SELECT id FROM subjects WHERE name IN (\(Self.marks(subjects))))",
                subjects.map(Binding.text))
        }
    }

    /// Discrete statistics per bucket from the rollups (see ``canUseRollups(_:_:)``).
    func rollupStatistics(_ query: StatisticsQuery) throws -> [StatisticsResult] {
        guard let typeID = try existingTypeID(query.type.identifier) else {
            return query.buckets.map { StatisticsResult(bucket: $0, discrete: Self.emptyDiscrete($0)) }
        }
        // Each bucket's whole UTC days from the day rollups, the rest of it from the quarter hours'.
        let levels = Rollup.levels(query.buckets.map { ($0.start.milliseconds, $0.end.milliseconds) })
        func prepare(_ table: String, _ bucket: String, from: Int64, to: Int64) throws -> SQLiteStatement {
            var conditions = SQLConditions()
            conditions.add(
                "r.type_id = ? AND r.\(bucket) >= ? AND r.\(bucket) < ?",
                [.integer(typeID), .integer(from), .integer(to)])
            addRollupFilters(query, to: &conditions)
            return try conditions.prepare(
                """
                SELECT r.\(bucket), r.n, r.sum, r.min, r.max, r.recent_start, r.recent_end, r.recent_value, r.source_id,
                    r.device_id
                FROM \(table) r WHERE \(conditions.sql) ORDER BY r.\(bucket)
                """, on: connection)
        }

        struct Origin: Hashable {
            var source: Int64
            var device: Int64
        }
        // Read out of the query once: touching the query in the loop copied it for every row.
        let ends = query.buckets.map(\.end.milliseconds)
        let separate = query.separateBySource
        let empty = Array(repeating: RollupValue(), count: ends.count)
        // One row of buckets per origin; consecutive rows mostly share theirs, so it is looked up only on a change.
        var slots = [Origin: Int]()
        var rows: [[RollupValue]] = []
        var current: (origin: Origin, slot: Int)?
        func add(_ row: SQLiteStatement, to bucket: Int) {
            let origin = separate ? Origin(source: row.int64(8), device: row.int64(9)) : Origin(source: 0, device: 0)
            if current?.origin != origin {
                if let slot = slots[origin] {
                    current = (origin, slot)
                } else {
                    rows.append(empty)
                    slots[origin] = rows.count - 1
                    current = (origin, rows.count - 1)
                }
            }
            rows[current?.slot ?? 0][bucket].merge(Self.rollupValue(row, from: 1))
        }
        if let first = levels.quarters.first {
            let quarters = try prepare("rollups", "bucket_ms", from: first.start, to: first.end)
            var bucketIndex = 0
            for range in levels.quarters {
                quarters.rewind()
                try quarters.bind(2, range.start)
                try quarters.bind(3, range.end)
                while try quarters.step() {
                    let at = quarters.int64(0)
                    while bucketIndex < ends.count, at >= ends[bucketIndex] { bucketIndex += 1 }
                    guard bucketIndex < ends.count else { break }
                    add(quarters, to: bucketIndex)
                }
            }
        }
        if let first = levels.days.first, let last = levels.days.last {
            let days = try prepare("day_rollups", "day_ms", from: first.start, to: last.end)
            var index = 0
            while try days.step() {
                let at = days.int64(0)
                while index < levels.days.count, at >= levels.days[index].end { index += 1 }
                guard index < levels.days.count else { break }
                if at >= levels.days[index].start { add(days, to: levels.days[index].bucket) }
            }
        }
        if !separate {
            return zip(query.buckets, rows.first ?? empty).map {
                StatisticsResult(bucket: $0, discrete: Self.discrete($0, $1))
            }
        }
        // Several devices of one source (or rows of one device under several subjects) may name the same provenance.
        var byProvenance = [Provenance: [RollupValue]]()
        for (origin, slot) in slots {
            let values = rows[slot]
            let provenance = try rollupProvenance(source: origin.source, device: origin.device)
            if var merged = byProvenance[provenance] {
                for index in merged.indices { merged[index].merge(values[index]) }
                byProvenance[provenance] = merged
            } else {
                byProvenance[provenance] = values
            }
        }
        return byProvenance.keys.sorted().flatMap { provenance in
            zip(query.buckets, byProvenance[provenance] ?? []).filter { $0.1.n > 0 }.map {
                StatisticsResult(bucket: $0.0, provenance: provenance, discrete: Self.discrete($0.0, $0.1))
            }
        }
    }

    /// `?,?,...`, one placeholder per value.
    private static func marks(_ values: [String]) -> String { values.map { _ in "?" }.joined(separator: ",") }

    /// The source identifier and device key of a rollup row's ids.
    func rollupProvenance(source: Int64, device: Int64) throws -> Provenance {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached(
            "SELECT so.identifier, (SELECT key FROM devices WHERE id = ?2) FROM sources so WHERE so.id = ?1")
        try statement.bind(1, source)
        try statement.bind(2, device)
        guard try statement.step() else { return Provenance(source: "", device: nil) }
        return Provenance(source: statement.text(0) ?? "", device: statement.text(1))
    }

    static func discrete(_ bucket: StatisticsBucket, _ value: RollupValue) -> DiscreteStatistics.Bucket {
        guard value.n > 0 else { return emptyDiscrete(bucket) }
        return DiscreteStatistics.Bucket(
            start: bucket.start, end: bucket.end, count: Int(value.n), sum: value.sum,
            average: value.sum / Double(value.n),
            minimum: value.min, maximum: value.max, mostRecent: value.recentValue,
            mostRecentEnd: Instant(milliseconds: value.recentEnd), timeWeightedAverage: nil)
    }

    static func emptyDiscrete(_ bucket: StatisticsBucket) -> DiscreteStatistics.Bucket {
        DiscreteStatistics.Bucket(
            start: bucket.start, end: bucket.end, count: 0, sum: nil, average: nil, minimum: nil, maximum: nil,
            mostRecent: nil, mostRecentEnd: nil, timeWeightedAverage: nil)
    }
}
