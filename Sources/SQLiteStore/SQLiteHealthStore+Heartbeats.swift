import Foundation
public import Health
internal import StoreEngine

/// Heartbeat series: one row per series in `heartbeat_series`, its beats in a blob (``HeartbeatCodec``).
extension SQLiteHealthStore {
    /// One stored series, as the queries read it.
    struct HeartbeatRow {
        var series: HeartbeatSeriesSample
        var seq: Int64
    }

    /// Saves a batch of series in one transaction, with the rules of quantity samples
    /// (`docs/store-semantics.md`, items 21 and 23); the natural key is `(source, device, start, end)`.
    public func save(_ series: [HeartbeatSeriesSample], as caller: Caller) throws -> [WriteOutcome] {
        defer { connection.resetCachedStatements() }
        guard !series.isEmpty else { return [] }
        try checkHeartbeats(series, firstIndex: 0, caller)
        return try writeTransaction { try insertHeartbeats(series, firstIndex: 0, caller) }
    }

    /// Refuses the batch when a series is invalid (its index in the batch is `firstIndex` + its position) or
    /// `caller` may not write heartbeat series.
    func checkHeartbeats(_ series: [HeartbeatSeriesSample], firstIndex: Int, _ caller: Caller) throws {
        for (index, sample) in series.enumerated() {
            if let reason = sample.invalidityReason {
                throw InvalidSampleError(index: firstIndex + index, reason: reason)
            }
        }
        try requireShare(caller, .heartbeatSeries)
    }

    /// Stores checked series inside the running write transaction (errors name a series by `firstIndex` + its
    /// position).
    func insertHeartbeats(_ series: [HeartbeatSeriesSample], firstIndex: Int, _ caller: Caller) throws
        -> [WriteOutcome]
    {
        let type = HealthType.heartbeatSeries
        _ = try typeID(type.identifier)  // so that deletions can name the type in tombstones
        var outcomes: [WriteOutcome] = []
        outcomes.reserveCapacity(series.count)
        for (index, sample) in series.enumerated() {
            outcomes.append(try save(sample, index: firstIndex + index, writer: caller.description))
        }
        try log(caller, .save, type: type.identifier, count: series.count, denied: false)
        return outcomes
    }

    private func save(_ series: HeartbeatSeriesSample, index: Int, writer: String) throws -> WriteOutcome {
        let sourceID = try sourceID(series.source)
        let deviceID = try deviceID(series.device)
        let subjectID = try subjectID(series.subject)
        let beats = HeartbeatCodec.encode(series.beats)
        let start = series.start.milliseconds
        let end = series.end.milliseconds
        let derived = series.hasDerivedID

        if !derived {
            // An explicit id names this series or nothing: not another series, not a quantity sample.
            let quantity = try connection.cached("SELECT 1 FROM samples WHERE uuid = ?1")
            try quantity.bind(1, series.id.bytes)
            // (The series it names may have been written by another version of the source.)
            let named = try storedHeartbeat(series.id)
            let namesAnother =
                try named.map {
                    try ($0.start, $0.deviceID, $0.end) != (start, deviceID, end)
                        || !isVersion($0.sourceID, of: sourceID)
                } ?? false
            let clash = try quantity.step() || namesAnother
            if clash {
                throw InvalidSampleError(index: index, reason: "uuid \(series.id) already names a different sample")
            }
        }
        let byKey = try connection.cached(
            """
            SELECT subject_id, beats FROM heartbeat_series
            WHERE start_ms = ?1 AND \(try sourceCondition(sourceID, 2)) AND device_id = ?3 AND end_ms = ?4
            """)
        try byKey.bind(1, start)
        try byKey.bind(2, sourceID)
        try byKey.bind(3, deviceID)
        try byKey.bind(4, end)
        if try byKey.step() {
            // The same measurement, whatever id it was given this time and whichever version of the source wrote
            // it (docs/store-semantics.md, item 21).
            return byKey.blob(1) == beats && byKey.int64(0) == subjectID ? .duplicate : .conflict
        }
        let insert = try connection.cached(
            """
            INSERT INTO heartbeat_series (id, start_ms, end_ms, source_id, device_id, subject_id, start_offset_s,
                writer, metadata_id, uuid, beats)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
            """)
        try insert.bind(1, try nextSequence())
        try insert.bind(2, start)
        try insert.bind(3, end)
        try insert.bind(4, sourceID)
        try insert.bind(5, deviceID)
        try insert.bind(6, subjectID)
        try insert.bind(7, Int64(series.startOffsetSeconds))
        try insert.bind(8, writer)
        try insert.bind(9, try metadataID(series.metadata))
        try insert.bind(10, derived ? nil : series.id.bytes)
        try insert.bind(11, beats)
        try insert.step()
        try raiseSpan(.heartbeat, to: end - start)
        return .inserted
    }

    /// The stored series named `id`: by its stored uuid, or else by the natural key its (derived) id encodes.
    private func storedHeartbeat(_ id: UUID) throws -> (
        rowID: Int64, writer: String, start: Int64, sourceID: Int64, deviceID: Int64, end: Int64
    )? {
        let explicit = try connection.cached(
            "SELECT id, writer, start_ms, source_id, device_id, end_ms FROM heartbeat_series WHERE uuid = ?1")
        try explicit.bind(1, id.bytes)
        if try explicit.step() {
            return (
                explicit.int64(0), explicit.text(1) ?? "", explicit.int64(2), explicit.int64(3), explicit.int64(4),
                explicit.int64(5)
            )
        }
        // A derived id starts with the start time (48 bits, sign-extended for times before 1970).
        let prefix = id.bytes.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let start = prefix >= 1 << 47 ? prefix - 1 << 48 : prefix
        let candidates = try connection.cached(
            """
            SELECT h.id, h.writer, h.source_id, h.device_id, h.end_ms, so.identifier, d.key
            FROM heartbeat_series h JOIN sources so ON so.id = h.source_id LEFT JOIN devices d ON d.id = h.device_id
            WHERE h.start_ms = ?1 AND h.uuid IS NULL
            """)
        try candidates.bind(1, start)
        while try candidates.step() {
            let derived = HeartbeatSeriesSample.derivedID(
                source: candidates.text(5) ?? "", device: candidates.int64(3) == 0 ? nil : candidates.text(6),
                start: Instant(milliseconds: start), end: Instant(milliseconds: candidates.int64(4)))
            if derived == id {
                return (
                    candidates.int64(0), candidates.text(1) ?? "", start, candidates.int64(2), candidates.int64(3),
                    candidates.int64(4)
                )
            }
        }
        return nil
    }

    public func heartbeatSeries(_ query: SampleQuery, as caller: Caller) throws -> HeartbeatSeriesPage {
        defer { connection.resetCachedStatements() }
        guard query.type.identifier == HealthType.heartbeatSeries.identifier else {
            return HeartbeatSeriesPage(series: [], next: nil)
        }
        var conditions = SQLConditions()
        if let to = query.to { conditions.add("h.start_ms <= ?", [.integer(to.milliseconds)]) }
        if let from = query.from {
            // The natural-key index finds the range by start; no series is longer than the longest stored.
            let span = try connection.scalarInt("SELECT value FROM counters WHERE name = 'heartbeat_span'") ?? 0
            conditions.add(
                "h.start_ms >= ? AND h.end_ms >= ?", [.integer(from.milliseconds - span), .integer(from.milliseconds)])
        }
        conditions.add("so.identifier", in: query.sources)
        conditions.add("d.key", in: query.devices)
        conditions.add("sj.name", in: query.subjects)
        if case .app(let app) = caller, try !canRead(caller, .heartbeatSeries) {
            conditions.add("h.writer = ?", [.text(app)])
        }
        let order = query.order
        if let cursor = query.cursor {
            let after = order.after(start: "h.start_ms", end: "h.end_ms", id: nil)
            conditions.add(after.sql, after.fields.map { Self.binding($0, of: cursor) })
        }
        let statement = try conditions.prepare(
            "SELECT \(Self.heartbeatColumns)\(conditions.clauses.isEmpty ? "" : " WHERE \(conditions.sql)") "
                + "ORDER BY \(order.orderBy(start: "h.start_ms", end: "h.end_ms", id: nil))", on: connection)

        // Rows stream in (start, end) order; ids order the rows of one (start, end), so each such group is sorted
        // before it is filtered, and the walk stops after the group that filled the page.
        let wanted = query.limit ?? Int.max
        var matched: [HeartbeatSeriesSample] = []
        var group: [HeartbeatSeriesSample] = []
        func flush() {
            group.sort { order.precedes(($0.start, $0.end, $0.id.bytes), ($1.start, $1.end, $1.id.bytes)) }
            for series in group where matched.count < wanted {
                if let cursor = query.cursor,
                    !order.follows((series.start, series.end, series.id.bytes), cursor: cursor)
                {
                    continue
                }
                guard query.matchesTime(start: series.start, end: series.end),
                    query.matchesMetadata(series.metadata)
                else { continue }
                matched.append(series)
            }
            group.removeAll()
        }
        while try statement.step() {
            let series = try readHeartbeatRow(statement).series
            if let first = group.first, (first.start, first.end) != (series.start, series.end) {
                flush()
                if matched.count >= wanted { break }
            }
            group.append(series)
        }
        flush()
        try log(caller, .query, type: query.type.identifier, count: matched.count, denied: false)
        let next = SampleCursor.following(
            matched: matched.count, wanted: wanted, last: matched.last.map { ($0.start, $0.end, $0.id) })
        return HeartbeatSeriesPage(series: matched, next: next)
    }

    private static let heartbeatColumns = """
        h.uuid, h.start_ms, h.end_ms, h.start_offset_s, so.identifier, so.version, h.device_id,
        d.name, d.manufacturer, d.model, d.hardware, d.firmware, d.software, d.serial, d.local_id,
        sj.name, m.text, h.id, h.beats
        FROM heartbeat_series h
        JOIN sources so ON so.id = h.source_id
        LEFT JOIN devices d ON d.id = h.device_id
        LEFT JOIN subjects sj ON sj.id = h.subject_id
        LEFT JOIN metadata_sets m ON m.id = h.metadata_id
        """

    private func readHeartbeatRow(_ statement: SQLiteStatement) throws -> HeartbeatRow {
        let start = Instant(milliseconds: statement.int64(1))
        let end = Instant(milliseconds: statement.int64(2))
        let version = statement.text(5) ?? ""
        let source = Source(identifier: statement.text(4) ?? "", version: version.isEmpty ? nil : version)
        let device = statement.int64(6) == 0 ? nil : Self.readDevice(statement, from: 7)
        let id: UUID
        if let bytes = statement.blob(0) {
            guard let stored = UUID(bytes: bytes) else {
                throw SQLiteError(code: 11, operation: "read", message: "a heartbeat series has a malformed uuid")
            }
            id = stored
        } else {
            id = HeartbeatSeriesSample.derivedID(
                source: source.identifier, device: device?.key, start: start, end: end)
        }
        let beats: [Beat]
        do {
            beats = try HeartbeatCodec.decode(statement.blob(18) ?? [])
        } catch {
            // SQLITE_CORRUPT: the file was damaged or written by something else; say which series.
            throw SQLiteError(
                code: 11, operation: "read", message: "heartbeat series \(id.uuidString.lowercased()): \(error)")
        }
        let series = HeartbeatSeriesSample(
            id: id, start: start, end: end, startOffsetSeconds: Int32(clamping: statement.int64(3)), beats: beats,
            source: source, device: device, subject: statement.text(15),
            metadata: MetadataCoding.decode(statement.text(16)))
        return HeartbeatRow(series: series, seq: statement.int64(17))
    }

    /// Deletes series `id` if `caller` may (apps only their own); `nil` when no series has that id.
    func deleteHeartbeatSeries(_ id: UUID, caller: Caller) throws -> Bool? {
        guard let stored = try storedHeartbeat(id) else { return nil }
        if case .app(let app) = caller, stored.writer != app { return false }
        let delete = try connection.cached("DELETE FROM heartbeat_series WHERE id = ?1")
        try delete.bind(1, stored.rowID)
        try delete.step()
        try tombstone(
            uuid: id.bytes, typeID: try typeID(HealthType.heartbeatSeries.identifier), writer: caller.description,
            replacedBy: nil)
        return true
    }

    /// Series written after `anchor`, oldest first, at most `limit`; only `writer`'s when given. A row's id is
    /// its write-order number.
    func heartbeatChanges(after anchor: Int64, limit: Int, writer: String?) throws -> [HeartbeatRow] {
        let statement = try connection.prepare(
            "SELECT \(Self.heartbeatColumns) WHERE h.id > ?1\(writer == nil ? "" : " AND h.writer = ?2") "
                + "ORDER BY h.id LIMIT \(max(0, limit))")
        try statement.bind(1, anchor)
        if let writer { try statement.bind(2, writer) }
        var rows: [HeartbeatRow] = []
        while try statement.step() { rows.append(try readHeartbeatRow(statement)) }
        return rows
    }
}
