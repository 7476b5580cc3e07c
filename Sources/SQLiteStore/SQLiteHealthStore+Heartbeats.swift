import Foundation
public import Health

/// Heartbeat series: one row per series in `heartbeat_series`, its beats in a blob (``HeartbeatCodec``).
extension SQLiteHealthStore {
    /// One stored series, as the queries read it.
    struct HeartbeatRow {
        var series: HeartbeatSeriesSample
        var seq: Int64
    }

    /// Saves a batch of series in one transaction, with the rules of quantity samples (store.md §6 items 21 and
    /// 23); the natural key is `(source, device, start, end)`.
    public func save(_ series: [HeartbeatSeriesSample], as caller: Caller) throws -> [WriteOutcome] {
        defer { connection.resetCachedStatements() }
        guard !series.isEmpty else { return [] }
        for (index, sample) in series.enumerated() {
            if let reason = sample.invalidityReason { throw InvalidSampleError(index: index, reason: reason) }
        }
        let type = HealthType.heartbeatSeries
        guard try canShare(caller, type) else {
            try log(caller, .save, type: type.identifier, count: 0, denied: true)
            throw NotAuthorizedError(caller: caller, type: type.identifier)
        }
        return try writeTransaction {
            _ = try typeID(type.identifier)  // so that deletions can name the type in tombstones
            var outcomes: [WriteOutcome] = []
            outcomes.reserveCapacity(series.count)
            for (index, sample) in series.enumerated() {
                outcomes.append(try save(sample, index: index, writer: caller.description))
            }
            try log(caller, .save, type: type.identifier, count: series.count, denied: false)
            return outcomes
        }
    }

    private func save(_ series: HeartbeatSeriesSample, index: Int, writer: String) throws -> WriteOutcome {
        let sourceID = try sourceID(series.source)
        let deviceID = try deviceID(series.device)
        let subjectID = try subjectID(series.subject)
        let beats = HeartbeatCodec.encode(series.beats)
        let start = series.start.milliseconds
        let end = series.end.milliseconds

        let byID = try connection.cached(
            "SELECT start_ms, source_id, device_id, end_ms, subject_id, beats FROM heartbeat_series WHERE uuid = ?1")
        try byID.bind(1, series.id.bytes)
        if try byID.step() {
            guard byID.int64(0) == start, byID.int64(1) == sourceID, byID.int64(2) == deviceID, byID.int64(3) == end
            else {
                throw InvalidSampleError(index: index, reason: "uuid \(series.id) already names a different sample")
            }
            return byID.blob(5) == beats && byID.int64(4) == subjectID ? .duplicate : .conflict
        }
        let byKey = try connection.cached(
            """
            SELECT subject_id, beats FROM heartbeat_series
            WHERE start_ms = ?1 AND source_id = ?2 AND device_id = ?3 AND end_ms = ?4
            """)
        try byKey.bind(1, start)
        try byKey.bind(2, sourceID)
        try byKey.bind(3, deviceID)
        try byKey.bind(4, end)
        if try byKey.step() {
            return byKey.blob(1) == beats && byKey.int64(0) == subjectID ? .duplicate : .conflict
        }
        if !series.hasDerivedID {
            let quantity = try connection.cached("SELECT 1 FROM samples WHERE uuid = ?1")
            try quantity.bind(1, series.id.bytes)
            if try quantity.step() {
                throw InvalidSampleError(index: index, reason: "uuid \(series.id) already names a different sample")
            }
        }
        let insert = try connection.cached(
            """
            INSERT INTO heartbeat_series (start_ms, source_id, device_id, end_ms, uuid, start_offset_s, subject_id,
                writer, seq, metadata, beat_count, beats)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            """)
        try insert.bind(1, start)
        try insert.bind(2, sourceID)
        try insert.bind(3, deviceID)
        try insert.bind(4, end)
        try insert.bind(5, series.id.bytes)
        try insert.bind(6, Int64(series.startOffsetSeconds))
        try insert.bind(7, subjectID)
        try insert.bind(8, writer)
        try insert.bind(9, try nextSequence())
        try insert.bind(10, encodedMetadata(series.metadata))
        try insert.bind(11, Int64(series.beats.count))
        try insert.bind(12, beats)
        try insert.step()
        return .inserted
    }

    public func heartbeatSeries(_ query: SampleQuery, as caller: Caller) throws -> HeartbeatSeriesPage {
        defer { connection.resetCachedStatements() }
        guard query.type.identifier == HealthType.heartbeatSeries.identifier else {
            return HeartbeatSeriesPage(series: [], next: nil)
        }
        var matched: [HeartbeatSeriesSample] = []
        var cursor = query.cursor
        let wanted = query.limit ?? Int.max
        // Fetch in pages: the exact time test and metadata predicates run in Swift on top of the SQL filters.
        while matched.count < wanted {
            let page = try heartbeatRows(query, caller: caller, after: cursor, limit: 1_000)
            for row in page where matched.count < wanted {
                let series = row.series
                guard query.matchesTime(start: series.start, end: series.end),
                    query.metadata.allSatisfy({ Self.matches($0, series.metadata) })
                else { continue }
                matched.append(series)
            }
            guard let last = page.last, page.count == 1_000 else { break }
            cursor = SampleCursor(start: last.series.start, end: last.series.end, id: last.series.id.uuidString)
        }
        try log(caller, .query, type: query.type.identifier, count: matched.count, denied: false)
        let next =
            matched.count == wanted && wanted != Int.max
            ? matched.last.map { SampleCursor(start: $0.start, end: $0.end, id: $0.id.uuidString) } : nil
        return HeartbeatSeriesPage(series: matched, next: next)
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

    /// Series overlapping the query's `[from, to]` that pass its source/device/subject filters and that `caller`
    /// may read (an app without read permission sees only what it wrote), after `cursor`, at most `limit`.
    private func heartbeatRows(_ query: SampleQuery, caller: Caller, after cursor: SampleCursor?, limit: Int) throws
        -> [HeartbeatRow]
    {
        var conditions = SQLConditions()
        if let to = query.to { conditions.add("h.start_ms <= ?", [.integer(to.milliseconds)]) }
        if let from = query.from { conditions.add("h.end_ms >= ?", [.integer(from.milliseconds)]) }
        conditions.add("so.identifier", in: query.sources)
        conditions.add("d.key", in: query.devices)
        conditions.add("sj.name", in: query.subjects)
        if case .app(let app) = caller, try !canRead(caller, .heartbeatSeries) {
            conditions.add("h.writer = ?", [.text(app)])
        }
        if let cursor {
            conditions.add(
                "(h.start_ms, h.end_ms, h.uuid) \(query.ascending ? ">" : "<") (?, ?, ?)",
                [
                    .integer(cursor.start.milliseconds), .integer(cursor.end.milliseconds),
                    .blob(Self.uuidBytes(cursor.id)),
                ])
        }
        let order = query.ascending ? "ASC" : "DESC"
        let statement = try conditions.prepare(
            "SELECT \(Self.heartbeatColumns)\(conditions.clauses.isEmpty ? "" : " WHERE \(conditions.sql)") "
                + "ORDER BY h.start_ms \(order), h.end_ms \(order), h.uuid \(order) LIMIT \(max(0, limit))",
            on: connection)
        var rows: [HeartbeatRow] = []
        while try statement.step() { rows.append(try readHeartbeatRow(statement)) }
        return rows
    }

    private func readHeartbeatRow(_ statement: SQLiteStatement) throws -> HeartbeatRow {
        let idBytes = statement.blob(0) ?? []
        guard let id = UUID(bytes: idBytes) else {
            throw SQLiteError(code: 11, operation: "read", message: "a heartbeat series has a malformed uuid")
        }
        let beats: [Beat]
        do {
            beats = try HeartbeatCodec.decode(statement.blob(18) ?? [])
        } catch {
            // SQLITE_CORRUPT: the file was damaged or written by something else; say which series.
            throw SQLiteError(
                code: 11, operation: "read", message: "heartbeat series \(id.uuidString.lowercased()): \(error)")
        }
        let version = statement.text(5) ?? ""
        let series = HeartbeatSeriesSample(
            id: id, start: Instant(milliseconds: statement.int64(1)), end: Instant(milliseconds: statement.int64(2)),
            startOffsetSeconds: Int32(clamping: statement.int64(3)), beats: beats,
            source: Source(identifier: statement.text(4) ?? "", version: version.isEmpty ? nil : version),
            device: statement.int64(6) == 0 ? nil : Self.readDevice(statement, from: 7), subject: statement.text(15),
            metadata: MetadataCoding.decode(statement.text(16)))
        return HeartbeatRow(series: series, seq: statement.int64(17))
    }

    /// Deletes series `id` if `caller` may (apps only their own); `nil` when no series has that id.
    func deleteHeartbeatSeries(_ id: UUID, caller: Caller) throws -> Bool? {
        let lookup = try connection.cached("SELECT writer FROM heartbeat_series WHERE uuid = ?1")
        try lookup.bind(1, id.bytes)
        guard try lookup.step() else { return nil }
        if case .app(let app) = caller, lookup.text(0) != app { return false }
        let delete = try connection.cached("DELETE FROM heartbeat_series WHERE uuid = ?1")
        try delete.bind(1, id.bytes)
        try delete.step()
        try tombstone(
            uuid: id.bytes, typeID: try typeID(HealthType.heartbeatSeries.identifier), writer: caller.description,
            replacedBy: nil)
        return true
    }

    /// Series written after `anchor`, oldest first, at most `limit`; only `writer`'s when given.
    func heartbeatChanges(after anchor: Int64, limit: Int, writer: String?) throws -> [HeartbeatRow] {
        let statement = try connection.prepare(
            "SELECT \(Self.heartbeatColumns) WHERE h.seq > ?1\(writer == nil ? "" : " AND h.writer = ?2") "
                + "ORDER BY h.seq LIMIT \(max(0, limit))")
        try statement.bind(1, anchor)
        if let writer { try statement.bind(2, writer) }
        var rows: [HeartbeatRow] = []
        while try statement.step() { rows.append(try readHeartbeatRow(statement)) }
        return rows
    }
}
