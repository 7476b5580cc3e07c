public import Foundation
public import Health
internal import StoreEngine

extension SQLiteHealthStore {
    /// One stored row, as the queries read it.
    struct Row {
        var sample: QuantitySample
        var seq: Int64
        var writer: String
    }

    /// What a query of rows reads; the source and subject ids (columns 20 and 21) name a row's stream.
    private static let rowColumns = """
        s.uuid, s.start_ms, s.end_ms, s.start_offset_s, s.value, so.identifier, so.version, s.device_id,
        d.name, d.manufacturer, d.model, d.hardware, d.firmware, d.software, d.serial, d.local_id,
        sj.name, s.metadata, s.seq, s.writer, s.source_id, s.subject_id
        FROM samples s
        JOIN sources so ON so.id = s.source_id
        LEFT JOIN devices d ON d.id = s.device_id
        LEFT JOIN subjects sj ON sj.id = s.subject_id
        """

    private func readRow(_ statement: SQLiteStatement, type: HealthType) -> Row? {
        guard let id = statement.blob(0).flatMap(UUID.init(bytes:)) else { return nil }
        let stream = Self.rowStream(statement, type: type)
        let sample = QuantitySample(
            id: id, type: type, start: Instant(milliseconds: statement.int64(1)),
            end: Instant(milliseconds: statement.int64(2)), startOffsetSeconds: stream.startOffsetSeconds,
            value: statement.double(4), source: stream.source, device: stream.device, subject: stream.subject,
            metadata: stream.metadata)
        return Row(sample: sample, seq: statement.int64(18), writer: statement.text(19) ?? "")
    }

    /// What the row at `statement` (``rowColumns``) shares with its stream: its type, offset, source, device,
    /// subject and metadata.
    static func rowStream(_ statement: SQLiteStatement, type: HealthType) -> QuantitySeries {
        let version = statement.text(6) ?? ""
        return QuantitySeries(
            type: type, startOffsetSeconds: Int32(clamping: statement.int64(3)),
            source: Source(identifier: statement.text(5) ?? "", version: version.isEmpty ? nil : version),
            device: statement.int64(7) == 0 ? nil : Self.readDevice(statement, from: 8), subject: statement.text(16),
            metadata: MetadataCoding.decode(statement.text(17)))
    }

    /// Rows of `type` overlapping `[from, to]` that pass the source/device/subject filters and that `caller`
    /// may read (an app without read permission sees only what it wrote).
    func rows(
        of type: HealthType, from: Instant?, to: Instant?, sources: [String]?, devices: [String]?, subjects: [String]?,
        caller: Caller, after cursor: SampleCursor? = nil, order: SampleOrder = .chronological(ascending: true),
        limit: Int? = nil, notStartingBefore earliest: Int64? = nil
    ) throws -> [Row] {
        guard let typeID = try existingTypeID(type.identifier) else { return [] }
        let statement = try rowStatement(
            type: type, typeID: typeID, from: from, to: to, sources: sources, devices: devices, subjects: subjects,
            caller: caller, after: cursor, order: order, limit: limit, notStartingBefore: earliest)
        var rows: [Row] = []
        while try statement.step() {
            if let row = readRow(statement, type: type) { rows.append(row) }
        }
        let series = try seriesRows(
            of: type, typeID: typeID, from: from, to: to, sources: sources, devices: devices, subjects: subjects,
            caller: caller, after: cursor, order: order, limit: limit)
        guard !series.isEmpty else { return rows }
        rows += series
        rows.sort { Self.precedes($0.sample, $1.sample, order) }
        if let limit, rows.count > limit { rows.removeLast(rows.count - limit) }
        return rows
    }

    /// The statement that reads ``rows(of:from:to:sources:devices:subjects:caller:after:order:limit:notStartingBefore:)``'s
    /// rows of the `samples` table (its chunked samples are read apart), in the query's order: ``rowColumns``, then
    /// with the source and subject ids last.
    func rowStatement(
        type: HealthType, typeID: Int64, from: Instant?, to: Instant?, sources: [String]?, devices: [String]?,
        subjects: [String]?, caller: Caller, after cursor: SampleCursor?, order: SampleOrder, limit: Int?,
        notStartingBefore earliest: Int64? = nil
    ) throws -> SQLiteStatement {
        var conditions = SQLConditions()
        conditions.add("s.type_id = ?", [.integer(typeID)])
        // Overlap: start <= to and end >= from; the exact (half-open) test runs in Swift afterwards.
        if let to { conditions.add("s.start_ms <= ?", [.integer(to.milliseconds)]) }
        if let from { conditions.add("s.end_ms >= ?", [.integer(from.milliseconds)]) }
        // A bound the caller knows (no sample reaching `from` starts earlier) lets the primary key find the range.
        if let earliest { conditions.add("s.start_ms >= ?", [.integer(earliest)]) }
        conditions.add("so.identifier", in: sources)
        conditions.add("d.key", in: devices)
        conditions.add("sj.name", in: subjects)
        if case .app(let app) = caller, try !canRead(caller, type) { conditions.add("s.writer = ?", [.text(app)]) }
        if let cursor {
            let after = order.after(start: "s.start_ms", end: "s.end_ms", id: "s.uuid")
            conditions.add(after.sql, after.fields.map { Self.binding($0, of: cursor) })
        }
        var sql =
            "SELECT \(Self.rowColumns) WHERE \(conditions.sql) "
            + "ORDER BY \(order.orderBy(start: "s.start_ms", end: "s.end_ms", id: "s.uuid"))"
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return try conditions.prepare(sql, on: connection)
    }

    /// A device from eight consecutive columns starting at `column`: name, manufacturer, model, hardware,
    /// firmware, software, serial, local identifier (the `devices` table's order).
    static func readDevice(_ statement: SQLiteStatement, from column: Int32) -> Device {
        Device(
            name: statement.text(column), manufacturer: statement.text(column + 1), model: statement.text(column + 2),
            hardwareVersion: statement.text(column + 3), firmwareVersion: statement.text(column + 4),
            softwareVersion: statement.text(column + 5), serialNumber: statement.text(column + 6),
            localIdentifier: statement.text(column + 7))
    }

    /// The value of a cursor's field, bound as the samples table stores it.
    static func binding(_ field: SampleOrderField, of cursor: SampleCursor) -> Binding {
        switch field {
        case .start: .integer(cursor.start.milliseconds)
        case .end: .integer(cursor.end.milliseconds)
        case .id: .blob(uuidBytes(cursor.id))
        }
    }

    static func uuidBytes(_ text: String) -> [UInt8] {
        UUID(uuidString: text)?.bytes ?? []
    }

    public func samples(_ query: SampleQuery, as caller: Caller) throws -> SamplePage {
        defer { connection.resetCachedStatements() }
        var matched: [QuantitySample] = []
        var cursor = query.cursor
        var wanted = query.limit ?? Int.max
        // A workout predicate: only its associated samples, looked for within the interval they span.
        let scope = try query.workoutScope { try workoutMembers($0, type: query.type) }
        if scope == nil { wanted = 0 }
        let (from, to, associated) = scope ?? (query.from, query.to, nil)
        // Fetch in pages: the time test and metadata predicates run in Swift on top of the SQL filters.
        while matched.count < wanted {
            let page = try rows(
                of: query.type, from: from, to: to, sources: query.sources, devices: query.devices,
                subjects: query.subjects, caller: caller, after: cursor, order: query.order, limit: 1_000)
            for row in page where matched.count < wanted {
                let sample = row.sample
                guard query.matchesTime(start: sample.start, end: sample.end),
                    query.matchesMetadata(sample.metadata), associated?.contains(sample.id) ?? true
                else { continue }
                matched.append(sample)
            }
            guard let last = page.last, page.count == 1_000 else {
                cursor = nil
                break
            }
            cursor = SampleCursor(start: last.sample.start, end: last.sample.end, id: last.sample.id.uuidString)
        }
        try log(caller, .query, type: query.type.identifier, count: matched.count, denied: false)
        let next = SampleCursor.following(
            matched: matched.count, wanted: wanted, last: matched.last.map { ($0.start, $0.end, $0.id) })
        return SamplePage(samples: matched, next: next)
    }

    public func statistics(_ query: StatisticsQuery, as caller: Caller) throws -> [StatisticsResult] {
        defer { connection.resetCachedStatements() }
        guard let from = query.sweepStart, let last = query.buckets.last else { return [] }
        if try canUseRollups(query, caller) {
            try log(caller, .statistics, type: query.type.identifier, count: 0, denied: false)
            return try rollupStatistics(query)
        }
        if try canUseCumulativeRollups(query, caller) {
            try log(caller, .statistics, type: query.type.identifier, count: 0, denied: false)
            return try cumulativeRollupStatistics(query)
        }
        let rows = try rows(
            of: query.type, from: from, to: last.end, sources: query.sources, devices: query.devices,
            subjects: query.subjects, caller: caller)
        let samples = rows.map { StatisticsSample($0.sample, lastModified: $0.seq) }
        try log(caller, .statistics, type: query.type.identifier, count: samples.count, denied: false)
        return try query.sweep(samples) { try priority(of: query.type) }
    }

    public func delete(_ ids: [UUID], as caller: Caller) throws -> Int {
        try delete(ids, as: caller, rehearse: false)
    }

    public func deletionCount(_ ids: [UUID], as caller: Caller) throws -> Int {
        try delete(ids, as: caller, rehearse: true)
    }

    private func delete(_ ids: [UUID], as caller: Caller, rehearse: Bool) throws -> Int {
        defer { connection.resetCachedStatements() }
        return try RehearsalRollback.run(rehearse: rehearse) { finish in try deleteInTransaction(ids, caller, finish) }
    }

    private func deleteInTransaction(_ ids: [UUID], _ caller: Caller, _ finish: (Int) throws -> Int) throws -> Int {
        try writeTransaction {
            var deleted = 0
            for id in ids {
                if let objects = try deleteObject(id, caller) {
                    deleted += objects
                    continue
                }
                let lookup = try connection.cached("SELECT type_id, writer FROM samples WHERE uuid = ?1")
                try lookup.bind(1, id.bytes)
                guard try lookup.step() else {
                    if let found = try deleteHeartbeatSeries(id, caller: caller) {
                        if found { deleted += 1 }
                        continue
                    }
                    // Not a row: a chunked series sample, which only the owner may delete.
                    guard caller == .owner else { continue }
                    if let members = try deleteMemberships(of: id, caller) {
                        deleted += members
                    } else if try deleteSeriesSample(id, writer: caller.description) {
                        deleted += 1
                    }
                    continue
                }
                let typeID = lookup.int64(0)
                if case .app(let app) = caller, lookup.text(1) != app { continue }  // apps delete only their own
                if let members = try deleteMemberships(of: id, caller) {
                    deleted += members
                    continue
                }
                try remove(uuid: id.bytes, typeID: typeID, writer: caller.description, replacedBy: nil)
                deleted += 1
            }
            try log(caller, .delete, type: nil, count: deleted, denied: false)
            return try finish(deleted)
        }
    }

    public func latestAnchor(of types: [HealthType], as caller: Caller) throws -> Int64 {
        defer { connection.resetCachedStatements() }
        var latest: Int64 = 0
        for type in types {
            guard let typeID = try existingTypeID(type.identifier) else { continue }
            let readAll = try canRead(caller, type)
            let own = readAll ? "" : " AND writer = ?2"
            if type.kind == .workout || type.kind == .correlation {
                let statement = try connection.cached(
                    "SELECT max(seq) FROM objects WHERE type_id = ?1 UNION ALL SELECT max(seq) FROM tombstones WHERE type_id = ?1"
                )
                try statement.bind(1, typeID)
                while try statement.step() { latest = max(latest, statement.int64(0)) }
                continue
            }
            var statements = [
                type.aggregation == .series
                    ? "SELECT max(id) FROM heartbeat_series WHERE ?1 = ?1\(own)"
                    : "SELECT max(seq) FROM samples WHERE type_id = ?1\(own)",
                "SELECT max(seq) FROM tombstones WHERE type_id = ?1\(own)",
            ]
            if readAll, type.aggregation != .series {
                statements.append("SELECT max(last_seq) FROM series_chunks WHERE type_id = ?1")
            }
            for sql in statements {
                let statement = try connection.cached(sql)
                try statement.bind(1, typeID)
                if !readAll { try statement.bind(2, caller.description) }
                if try statement.step() { latest = max(latest, statement.int64(0)) }
            }
        }
        return latest
    }

    public func changes(of type: HealthType, since anchor: Int64?, limit: Int, as caller: Caller) throws -> ChangeSet {
        defer { connection.resetCachedStatements() }
        let start = anchor ?? 0
        guard let typeID = try existingTypeID(type.identifier) else {
            // Nothing of the type was ever written; the call is logged all the same.
            try log(caller, .changes, type: type.identifier, count: 0, denied: false)
            return ChangeSet(added: [], deleted: [], anchor: start, hasMore: false)
        }
        if type.kind == .workout || type.kind == .correlation {
            return try objectChanges(of: type, typeID: typeID, since: start, limit: limit, as: caller)
        }
        let readAll = try canRead(caller, type)
        var rows: [Row] = []
        var heartbeats: [HeartbeatRow] = []
        if type.aggregation == .series {
            heartbeats = try heartbeatChanges(
                after: start, limit: limit + 1, writer: readAll ? nil : caller.description)
        } else {
            let ownOnly = readAll ? "" : " AND s.writer = ?3"
            let added = try connection.prepare(
                "SELECT \(Self.rowColumns) WHERE s.type_id = ?1 AND s.seq > ?2\(ownOnly) ORDER BY s.seq LIMIT \(limit + 1)"
            )
            try added.bind(1, typeID)
            try added.bind(2, start)
            if !readAll { try added.bind(3, caller.description) }
            while try added.step() { if let row = readRow(added, type: type) { rows.append(row) } }
            if readAll {
                rows = (rows + (try seriesChanges(of: type, typeID: typeID, after: start))).sorted { $0.seq < $1.seq }
            }
        }
        let tombstones = try connection.prepare(
            "SELECT seq, uuid FROM tombstones WHERE type_id = ?1 AND seq > ?2\(readAll ? "" : " AND writer = ?3") "
                + "ORDER BY seq LIMIT \(limit + 1)")
        try tombstones.bind(1, typeID)
        try tombstones.bind(2, start)
        if !readAll { try tombstones.bind(3, caller.description) }
        var deleted: [(Int64, UUID)] = []
        while try tombstones.step() {
            if let id = tombstones.blob(1).flatMap(UUID.init(bytes:)) { deleted.append((tombstones.int64(0), id)) }
        }
        // Merge both streams by sequence and cut at `limit`.
        let events = (rows.map { ($0.seq, true) } + heartbeats.map { ($0.seq, true) } + deleted.map { ($0.0, false) })
            .sorted { $0.0 < $1.0 }
        let kept = events.prefix(max(0, limit))
        let newAnchor = kept.last?.0 ?? start
        try log(caller, .changes, type: type.identifier, count: kept.count, denied: false)
        return ChangeSet(
            added: rows.filter { $0.seq <= newAnchor }.map(\.sample),
            heartbeatSeries: heartbeats.filter { $0.seq <= newAnchor }.map(\.series),
            deleted: deleted.filter { $0.0 <= newAnchor }.map(\.1), anchor: newAnchor,
            hasMore: events.count > kept.count)
    }
}

/// A value to bind to a statement parameter.
enum Binding {
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    func bind(to statement: SQLiteStatement, at index: Int32) throws {
        switch self {
        case .integer(let value): try statement.bind(index, value)
        case .text(let value): try statement.bind(index, value)
        case .blob(let value): try statement.bind(index, value)
        }
    }
}
