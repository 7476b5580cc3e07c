import Foundation
public import Health
internal import StoreEngine

/// Heartbeat series: one row per series in `heartbeat_series`, the beats in a bytea (``PostgresBeats``), with the
/// SQLite engine's rules: the natural key `(source, device, start, end)` is unique, rewriting is a duplicate or a
/// conflict, an explicit id names that series only.
extension PostgresHealthStore {
    struct HeartbeatRow {
        var series: HeartbeatSeriesSample
        var seq: Int64
    }

    /// Saves a gateway batch in one write transaction: its samples, stream by stream from their columns (as
    /// `save(_:as:)` of samples saves them, with the same outcomes), then its heartbeat series, samples with ids,
    /// correlations and workouts. Checked as the
    /// SQLite engine checks a batch; a failure anywhere, a heartbeat series' included, rolls back the whole batch.
    public func save(_ batch: SampleBatch, as caller: Caller) throws -> [WriteOutcome] {
        guard !batch.isEmpty else { return [] }
        let types = try QuantitySeries.catalogued(batch.quantities)
        var shared: [HealthType] = []
        for type in types where !shared.contains(where: { $0.identifier == type.identifier }) { shared.append(type) }
        try requireShare(caller, shared)
        let count = batch.quantityCount
        if !batch.heartbeats.isEmpty { try checkHeartbeats(batch.heartbeats, firstIndex: count, caller) }
        return try writeTransaction { connection in
            var outcomes = try count == 0 ? [] : insertSeries(connection, batch.quantities, types: types, caller)
            if !batch.heartbeats.isEmpty {
                outcomes += try insertHeartbeats(connection, batch.heartbeats, firstIndex: count, caller)
            }
            if !batch.identified.isEmpty {
                outcomes += try InvalidSampleError.offset(by: outcomes.count) { try save(batch.identified, as: caller) }
            }
            if !batch.correlations.isEmpty {
                outcomes += try InvalidSampleError.offset(by: outcomes.count) {
                    try save(batch.correlations, as: caller)
                }
            }
            if !batch.workouts.isEmpty {
                outcomes += try InvalidSampleError.offset(by: outcomes.count) {
                    try save(batch.workouts, as: caller)
                }
            }
            return outcomes
        }
    }

    public func save(_ series: [HeartbeatSeriesSample], as caller: Caller) throws -> [WriteOutcome] {
        guard !series.isEmpty else { return [] }
        try checkHeartbeats(series, firstIndex: 0, caller)
        return try writeTransaction { connection in try insertHeartbeats(connection, series, firstIndex: 0, caller) }
    }

    /// Refuses invalid series (``InvalidSampleError`` naming one by `firstIndex` + its place) and a caller
    /// without share permission for heartbeat series.
    private func checkHeartbeats(_ series: [HeartbeatSeriesSample], firstIndex: Int, _ caller: Caller) throws {
        for (index, sample) in series.enumerated() {
            if let reason = sample.invalidityReason {
                throw InvalidSampleError(index: firstIndex + index, reason: reason)
            }
        }
        try requireShare(caller, [.heartbeatSeries])
    }

    /// Stores checked series inside the running write transaction (errors name a series by `firstIndex` + its
    /// place) and logs the save.
    private func insertHeartbeats(
        _ connection: PostgresConnection, _ series: [HeartbeatSeriesSample], firstIndex: Int, _ caller: Caller
    ) throws -> [WriteOutcome] {
        let type = HealthType.heartbeatSeries
        _ = try typeID(connection, type.identifier)  // so that deletions can name the type in tombstones
        var outcomes: [WriteOutcome] = []
        outcomes.reserveCapacity(series.count)
        for (index, sample) in series.enumerated() {
            outcomes.append(try save(connection, sample, index: firstIndex + index, writer: caller.description))
        }
        try log(connection, caller, .save, type: type.identifier, count: series.count, denied: false)
        return outcomes
    }

    private func save(_ connection: PostgresConnection, _ series: HeartbeatSeriesSample, index: Int, writer: String)
        throws -> WriteOutcome
    {
        let sourceID = try sourceID(connection, series.source)
        let deviceID = try deviceID(connection, series.device)
        let subjectID = try subjectID(connection, series.subject)
        let beats = PostgresBeats.encode(series.beats)
        let start = series.start.milliseconds
        let end = series.end.milliseconds
        let derived = series.hasDerivedID
        let versions = try sourceVersionIDs(connection, sourceID)

        if !derived {
            // An explicit id names this series or nothing: not another series, not a quantity sample.
            let quantity = try connection.query("SELECT 1 FROM samples WHERE uuid = $1", [series.id.uuidString])
            let named = try connection.query(
                "SELECT start_ms, source_id, device_id, end_ms FROM heartbeat_series WHERE uuid = $1",
                [series.id.uuidString])
            // (The series it names may have been written by another version of the source.)
            let namesAnother =
                named.count > 0
                && ((named.int64(0, 0), named.int64(0, 2), named.int64(0, 3)) != (start, deviceID, end)
                    || !versions.contains(named.int64(0, 1)))
            let clash = quantity.count > 0 || namesAnother
            if clash {
                throw InvalidSampleError(index: index, reason: "uuid \(series.id) already names a different sample")
            }
        }
        let stored = try connection.query(
            """
            SELECT subject_id, beats FROM heartbeat_series
            WHERE start_ms = $1 AND source_id = ANY($2::integer[]) AND device_id = $3 AND end_ms = $4
            """, ["\(start)", PostgresText.array(versions), "\(deviceID)", "\(end)"])
        if stored.count > 0 {
            // The same measurement, whatever id it was given this time and whichever version of the source wrote
            // it (docs/store-semantics.md, item 21).
            return stored.bytes(0, 1) == beats && stored.int64(0, 0) == subjectID ? .duplicate : .conflict
        }
        try connection.query(
            """
            INSERT INTO heartbeat_series (seq, start_ms, end_ms, source_id, device_id, subject_id, start_offset_s,
                writer, metadata, uuid, explicit, beats)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """,
            [
                "\(nextSequence())", "\(start)", "\(end)", "\(sourceID)", "\(deviceID)", "\(subjectID)",
                "\(series.startOffsetSeconds)", writer, encodedMetadata(series.metadata), series.id.uuidString,
                derived ? "false" : "true", PostgresText.bytea(beats),
            ])
        try connection.query(
            "UPDATE counters SET value = $1 WHERE name = 'heartbeat_span' AND value < $1", ["\(end - start)"])
        return .inserted
    }

    public func heartbeatSeries(_ query: SampleQuery, as caller: Caller) throws -> HeartbeatSeriesPage {
        guard query.type.identifier == HealthType.heartbeatSeries.identifier else {
            return HeartbeatSeriesPage(series: [], next: nil)
        }
        return try withConnection { connection in
            var matched: [HeartbeatSeriesSample] = []
            var cursor = query.cursor
            let wanted = query.limit ?? Int.max
            let ownOnly = try !canRead(connection, caller, .heartbeatSeries)
            while matched.count < wanted {
                var conditions = PostgresConditions()
                if let to = query.to { conditions.add("h.start_ms <= ?", ["\(to.milliseconds)"]) }
                if let from = query.from {
                    // No series is longer than the longest stored: that bounds the start for the index.
                    let span = try connection.query("SELECT value FROM counters WHERE name = 'heartbeat_span'")
                        .int64(0, 0)
                    conditions.add(
                        "h.start_ms >= ? AND h.end_ms >= ?", ["\(from.milliseconds - span)", "\(from.milliseconds)"])
                }
                conditions.add("so.identifier", in: query.sources)
                conditions.add("d.key", in: query.devices)
                conditions.add("sj.name", in: query.subjects)
                if ownOnly { conditions.add("h.writer = ?", [caller.description]) }
                let order = query.order
                if let cursor {
                    let after = order.after(
                        start: "h.start_ms", end: "h.end_ms", id: "h.uuid", idPlaceholder: "?::uuid")
                    conditions.add(after.sql, after.fields.map { Self.parameter($0, of: cursor) })
                }
                let limit = conditions.parameter("1000")
                let rows = try connection.query(
                    "SELECT \(Self.heartbeatColumns) WHERE \(conditions.sql) "
                        + "ORDER BY \(order.orderBy(start: "h.start_ms", end: "h.end_ms", id: "h.uuid")) LIMIT \(limit)",
                    conditions.parameters)
                let page = try readHeartbeatRows(rows)
                for row in page where matched.count < wanted {
                    let series = row.series
                    guard query.matchesTime(start: series.start, end: series.end),
                        query.matchesMetadata(series.metadata)
                    else { continue }
                    matched.append(series)
                }
                guard let last = page.last?.series, page.count == 1_000 else { break }
                cursor = SampleCursor(start: last.start, end: last.end, id: last.id.uuidString)
            }
            try log(connection, caller, .query, type: query.type.identifier, count: matched.count, denied: false)
            let next = SampleCursor.following(
                matched: matched.count, wanted: wanted, last: matched.last.map { ($0.start, $0.end, $0.id) })
            return HeartbeatSeriesPage(series: matched, next: next)
        }
    }

    private static let heartbeatColumns = """
        h.uuid, h.start_ms, h.end_ms, h.start_offset_s, so.identifier, so.version, h.device_id,
        d.name, d.manufacturer, d.model, d.hardware, d.firmware, d.software, d.serial, d.local_id,
        sj.name, h.metadata, h.seq, h.beats
        FROM heartbeat_series h
        JOIN sources so ON so.id = h.source_id
        LEFT JOIN devices d ON d.id = h.device_id
        LEFT JOIN subjects sj ON sj.id = h.subject_id
        """

    private func readHeartbeatRows(_ rows: PostgresRows) throws -> [HeartbeatRow] {
        try (0..<rows.count).map { row in
            guard let id = rows.text(row, 0).flatMap(UUID.init(uuidString:)) else {
                throw PostgresError(code: .unexpected, message: "a heartbeat series has a malformed uuid")
            }
            let beats: [Beat]
            do {
                beats = try PostgresBeats.decode(rows.bytes(row, 18) ?? [])
            } catch {
                throw PostgresError(
                    code: .unexpected, message: "heartbeat series \(id.uuidString.lowercased()): \(error)")
            }
            let version = rows.text(row, 5) ?? ""
            let series = HeartbeatSeriesSample(
                id: id, start: Instant(milliseconds: rows.int64(row, 1)),
                end: Instant(milliseconds: rows.int64(row, 2)),
                startOffsetSeconds: Int32(clamping: rows.int64(row, 3)), beats: beats,
                source: Source(identifier: rows.text(row, 4) ?? "", version: version.isEmpty ? nil : version),
                device: rows.int64(row, 6) == 0 ? nil : Self.readDevice(rows, row, from: 7),
                subject: rows.text(row, 15), metadata: MetadataCoding.decode(rows.text(row, 16)))
            return HeartbeatRow(series: series, seq: rows.int64(row, 17))
        }
    }

    /// Deletes series `id` if `caller` may (apps only their own); whether it did.
    func deleteHeartbeatSeries(_ connection: PostgresConnection, _ id: UUID, caller: Caller) throws -> Bool {
        let stored = try connection.query("SELECT seq, writer FROM heartbeat_series WHERE uuid = $1", [id.uuidString])
        guard stored.count > 0 else { return false }
        if case .app(let app) = caller, stored.text(0, 1) != app { return false }
        try connection.query("DELETE FROM heartbeat_series WHERE seq = $1", ["\(stored.int64(0, 0))"])
        try tombstone(
            connection, uuid: id, typeID: try typeID(connection, HealthType.heartbeatSeries.identifier),
            writer: caller.description, replacedBy: nil)
        return true
    }

    /// Series written after `anchor`, oldest first, at most `limit`; only `writer`'s when given.
    func heartbeatChanges(_ connection: PostgresConnection, after anchor: Int64, limit: Int, writer: String?) throws
        -> [HeartbeatRow]
    {
        let rows = try connection.query(
            "SELECT \(Self.heartbeatColumns) WHERE h.seq > $1 AND ($2::text IS NULL OR h.writer = $2) "
                + "ORDER BY h.seq LIMIT $3", ["\(anchor)", writer, "\(max(0, limit))"])
        return try readHeartbeatRows(rows)
    }
}

/// The beats of a series as stored: a version byte (1), then per beat its offset and RR interval as IEEE 754
/// doubles (big-endian bit patterns) and a flag byte (1: preceded by a gap). Every value comes back exactly.
/// Simpler and larger than the SQLite engine's `HeartbeatCodec` (17 bytes a beat before PostgreSQL's own
/// compression of large values), and readable from SQL: `get_byte`, or `substring` for the doubles.
enum PostgresBeats {
    static let version: UInt8 = 1

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    static func encode(_ beats: [Beat]) -> [UInt8] {
        var bytes: [UInt8] = [version]
        bytes.reserveCapacity(1 + beats.count * 17)
        for beat in beats {
            for value in [beat.offsetMilliseconds.bitPattern, beat.rrMilliseconds.bitPattern] {
                for shift in stride(from: 56, through: 0, by: -8) {
                    bytes.append(UInt8(truncatingIfNeeded: value >> shift))
                }
            }
            bytes.append(beat.precededByGap ? 1 : 0)
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws(Malformed) -> [Beat] {
        guard let first = bytes.first, first == version else {
            throw Malformed(description: "unknown beats version \(bytes.first.map { "\($0)" } ?? "(empty)")")
        }
        guard (bytes.count - 1) % 17 == 0 else { throw Malformed(description: "\(bytes.count) bytes of beats") }
        var beats: [Beat] = []
        beats.reserveCapacity((bytes.count - 1) / 17)
        var offset = 1
        func double() -> Double {
            var bits: UInt64 = 0
            for byte in bytes[offset..<offset + 8] { bits = bits << 8 | UInt64(byte) }
            offset += 8
            return Double(bitPattern: bits)
        }
        while offset < bytes.count {
            let time = double()
            let rr = double()
            let flags = bytes[offset]
            offset += 1
            beats.append(Beat(offsetMilliseconds: time, rrMilliseconds: rr, precededByGap: flags & 1 != 0))
        }
        return beats
    }
}

extension PostgresHealthStore {
    /// Saves the batches `next` hands out in one transaction (``HealthStoreEngine/saveAll(as:_:)``), each through
    /// the staging table as a single batch is, its rollups written before the next.
    public func saveAll(as caller: Caller, _ next: @Sendable () throws -> SampleBatch?) throws -> [WriteOutcome: Int] {
        let counts = try writeTransaction { connection in
            copiesUnderSavepoints = true
            defer { copiesUnderSavepoints = false }
            var counts: [WriteOutcome: Int] = [:]
            while let batch = try next() {
                for outcome in try save(batch, as: caller) { counts[outcome, default: 0] += 1 }
                try flushRollups(connection)
            }
            return counts
        }
        // After a bulk load the planner's statistics are those of the tables before it until autovacuum analyzes
        // them (a minute or more later): a range query after a cursor then looks cheap to sort whole, and each page
        // of an export read and sorted every row after it (3.3 times as long for 1 M samples: BENCHMARKS.md, "Export
        // from PostgreSQL through binary COPY"). The import is committed: statistics it cannot refresh (a role that
        // does not own the tables is skipped with a warning, a lost connection) are left to autovacuum.
        if (counts[.inserted] ?? 0) + (counts[.replaced] ?? 0) >= Self.analyzeAfter {
            _ = try? withConnection { connection in
                try connection.run(
                    "ANALYZE samples, rollups, cumulative_rollups, heartbeat_series, objects, object_members")
            }
        }
        return counts
    }

    /// How many samples an import (``saveAll(as:_:)``) stores before it refreshes the planner's statistics.
    static let analyzeAfter = 10_000
}
