public import Foundation
public import Health
internal import StoreEngine

extension PostgresHealthStore {
    /// One stored row, as the queries read it.
    struct Row {
        var sample: QuantitySample
        var seq: Int64
    }

    static let rowColumns = """
        s.uuid, s.start_ms, s.end_ms, s.start_offset_s, s.value, so.identifier, so.version, s.device_id,
        d.name, d.manufacturer, d.model, d.hardware, d.firmware, d.software, d.serial, d.local_id,
        sj.name, s.metadata, s.seq
        FROM samples s
        JOIN sources so ON so.id = s.source_id
        LEFT JOIN devices d ON d.id = s.device_id
        LEFT JOIN subjects sj ON sj.id = s.subject_id
        """

    func readRows(_ rows: PostgresRows, type: HealthType) -> [Row] {
        var result: [Row] = []
        result.reserveCapacity(rows.count)
        for row in 0..<rows.count {
            guard let id = rows.text(row, 0).flatMap(UUID.init(uuidString:)) else { continue }
            let version = rows.text(row, 6) ?? ""
            let sample = QuantitySample(
                id: id, type: type, start: Instant(milliseconds: rows.int64(row, 1)),
                end: Instant(milliseconds: rows.int64(row, 2)),
                startOffsetSeconds: Int32(clamping: rows.int64(row, 3)), value: rows.double(row, 4),
                source: Source(identifier: rows.text(row, 5) ?? "", version: version.isEmpty ? nil : version),
                device: rows.int64(row, 7) == 0 ? nil : Self.readDevice(rows, row, from: 8),
                subject: rows.text(row, 16), metadata: MetadataCoding.decode(rows.text(row, 17)))
            result.append(Row(sample: sample, seq: rows.int64(row, 18)))
        }
        return result
    }

    /// The value of a cursor's field as a query parameter.
    static func parameter(_ field: SampleOrderField, of cursor: SampleCursor) -> String {
        switch field {
        case .start: "\(cursor.start.milliseconds)"
        case .end: "\(cursor.end.milliseconds)"
        case .id: cursor.id
        }
    }

    /// A device from eight consecutive columns: name, manufacturer, model, hardware, firmware, software, serial,
    /// local identifier (the `devices` table's order).
    static func readDevice(_ rows: PostgresRows, _ row: Int, from column: Int) -> Device {
        Device(
            name: rows.text(row, column), manufacturer: rows.text(row, column + 1), model: rows.text(row, column + 2),
            hardwareVersion: rows.text(row, column + 3), firmwareVersion: rows.text(row, column + 4),
            softwareVersion: rows.text(row, column + 5), serialNumber: rows.text(row, column + 6),
            localIdentifier: rows.text(row, column + 7))
    }

    /// Rows of `type` overlapping `[from, to]` that pass the source/device/subject filters and that `caller` may
    /// read (an app without read permission sees only what it wrote), in query order.
    func rows(
        _ connection: PostgresConnection, of type: HealthType, from: Instant?, to: Instant?, sources: [String]?,
        devices: [String]?, subjects: [String]?, caller: Caller, after cursor: SampleCursor? = nil,
        order: SampleOrder = .chronological(ascending: true), limit: Int? = nil
    ) throws -> [Row] {
        guard let typeID = try existingTypeID(connection, type.identifier) else { return [] }
        var conditions = try rangeConditions(
            connection, typeID: typeID, type: type, from: from, to: to, sources: sources, devices: devices,
            subjects: subjects, caller: caller, after: cursor, order: order)
        var sql =
            "SELECT \(Self.rowColumns) WHERE \(conditions.sql) "
            + "ORDER BY \(order.orderBy(start: "s.start_ms", end: "s.end_ms", id: "s.uuid"))"
        if let limit { sql += " LIMIT \(conditions.parameter("\(max(0, limit))"))" }
        return readRows(try connection.query(sql, conditions.parameters), type: type)
    }

    /// The SQL conditions on `samples s` of a range query by type and time (``rows(_:of:from:to:sources:devices:subjects:caller:after:order:limit:)``,
    /// ``sampleColumns(_:as:)``): rows of `typeID` that may overlap `[from, to]`, of the sources, devices and subjects
    /// named (by their ids, so that no join is needed), that `caller` may read, after `cursor` in `order`.
    func rangeConditions(
        _ connection: PostgresConnection, typeID: Int64, type: HealthType, from: Instant?, to: Instant?,
        sources: [String]?, devices: [String]?, subjects: [String]?, caller: Caller, after cursor: SampleCursor?,
        order: SampleOrder
    ) throws -> PostgresConditions {
        var conditions = PostgresConditions()
        conditions.add("s.type_id = ?", ["\(typeID)"])
        // Overlap: start <= to and end >= from; no sample is longer than the longest stored, which bounds the
        // start from below for the index. The exact (half-open) test runs in Swift afterwards.
        if let to { conditions.add("s.start_ms <= ?", ["\(to.milliseconds)"]) }
        if let from {
            let span = try span(connection, typeID: typeID)
            conditions.add(
                "s.start_ms >= ? AND s.end_ms >= ?", ["\(from.milliseconds - span)", "\(from.milliseconds)"])
        }
        conditions.add("s.source_id", ids: "SELECT id FROM sources WHERE identifier", in: sources)
        conditions.add("s.device_id", ids: "SELECT id FROM devices WHERE key", in: devices)
        conditions.add("s.subject_id", ids: "SELECT id FROM subjects WHERE name", in: subjects)
        if case .app(let app) = caller, try !canRead(connection, caller, type) {
            conditions.add("s.writer = ?", [app])
        }
        if let cursor {
            let after =
                order.afterRow(start: "s.start_ms", end: "s.end_ms", id: "s.uuid", idPlaceholder: "?::uuid")
                ?? order.after(start: "s.start_ms", end: "s.end_ms", id: "s.uuid", idPlaceholder: "?::uuid")
            conditions.add(after.sql, after.fields.map { Self.parameter($0, of: cursor) })
        }
        return conditions
    }

    public func samples(_ query: SampleQuery, as caller: Caller) throws -> SamplePage {
        try withConnection { connection in
            var matched: [QuantitySample] = []
            var cursor = query.cursor
            var wanted = query.limit ?? Int.max
            // A workout predicate: only its associated samples, looked for within the interval they span.
            let scope = try query.workoutScope { try workoutMembers(connection, $0, type: query.type) }
            if scope == nil { wanted = 0 }
            let (from, to, associated) = scope ?? (query.from, query.to, nil)
            // Fetch in pages: the time test and metadata predicates run in Swift on top of the SQL filters.
            while matched.count < wanted {
                let page = try rows(
                    connection, of: query.type, from: from, to: to, sources: query.sources,
                    devices: query.devices, subjects: query.subjects, caller: caller, after: cursor,
                    order: query.order, limit: 1_000)
                for row in page where matched.count < wanted {
                    let sample = row.sample
                    guard query.matchesTime(start: sample.start, end: sample.end),
                        query.matchesMetadata(sample.metadata), associated?.contains(sample.id) ?? true
                    else { continue }
                    matched.append(sample)
                }
                guard let last = page.last, page.count == 1_000 else { break }
                cursor = SampleCursor(start: last.sample.start, end: last.sample.end, id: last.sample.id.uuidString)
            }
            try log(connection, caller, .query, type: query.type.identifier, count: matched.count, denied: false)
            let next = SampleCursor.following(
                matched: matched.count, wanted: wanted, last: matched.last.map { ($0.start, $0.end, $0.id) })
            return SamplePage(samples: matched, next: next)
        }
    }

    public func statistics(_ query: StatisticsQuery, as caller: Caller) throws -> [StatisticsResult] {
        try withConnection { connection in
            guard let from = query.sweepStart, let last = query.buckets.last else { return [] }
            if try canUseRollups(connection, query, caller) {
                try log(connection, caller, .statistics, type: query.type.identifier, count: 0, denied: false)
                return try rollupStatistics(connection, query)
            }
            if try canUseCumulativeRollups(connection, query, caller) {
                try log(connection, caller, .statistics, type: query.type.identifier, count: 0, denied: false)
                return try cumulativeRollupStatistics(connection, query)
            }
            let rows = try rows(
                connection, of: query.type, from: from, to: last.end, sources: query.sources,
                devices: query.devices, subjects: query.subjects, caller: caller)
            let samples = rows.map { StatisticsSample($0.sample, lastModified: $0.seq) }
            try log(connection, caller, .statistics, type: query.type.identifier, count: samples.count, denied: false)
            return try query.sweep(samples) { try priority(connection, of: query.type) }
        }
    }

    public func delete(_ ids: [UUID], as caller: Caller) throws -> Int {
        try delete(ids, as: caller, rehearse: false)
    }

    public func deletionCount(_ ids: [UUID], as caller: Caller) throws -> Int {
        try delete(ids, as: caller, rehearse: true)
    }

    private func delete(_ ids: [UUID], as caller: Caller, rehearse: Bool) throws -> Int {
        try RehearsalRollback.run(rehearse: rehearse) { finish in try deleteInTransaction(ids, caller, finish) }
    }

    private func deleteInTransaction(_ ids: [UUID], _ caller: Caller, _ finish: (Int) throws -> Int) throws -> Int {
        try writeTransaction { connection in
            var deleted = 0
            for id in ids {
                if let objects = try deleteObject(connection, id, caller) {
                    deleted += objects
                    continue
                }
                let stored = try connection.query(
                    "SELECT type_id, writer FROM samples WHERE uuid = $1", [id.uuidString])
                guard stored.count > 0 else {
                    if try deleteHeartbeatSeries(connection, id, caller: caller) { deleted += 1 }
                    continue
                }
                if case .app(let app) = caller, stored.text(0, 1) != app { continue }  // apps delete only their own
                if let members = try deleteMemberships(connection, of: id, caller) {
                    deleted += members
                    continue
                }
                try remove(
                    connection, uuid: id, typeID: stored.int64(0, 0), writer: caller.description, replacedBy: nil)
                deleted += 1
            }
            try log(connection, caller, .delete, type: nil, count: deleted, denied: false)
            return try finish(deleted)
        }
    }

    public func latestAnchor(of types: [HealthType], as caller: Caller) throws -> Int64 {
        try withConnection { connection in
            var latest: Int64 = 0
            for type in types {
                guard let typeID = try existingTypeID(connection, type.identifier) else { continue }
                let writer: String? = try canRead(connection, caller, type) ? nil : caller.description
                let own = "($2::text IS NULL OR writer = $2)"
                if type.kind == .workout || type.kind == .correlation {
                    for table in ["objects", "tombstones"] {
                        let result = try connection.query(
                            "SELECT max(seq) FROM \(table) WHERE type_id = $1", ["\(typeID)"])
                        if result.count > 0 { latest = max(latest, result.int64(0, 0)) }
                    }
                    continue
                }
                let rows =
                    type.aggregation == .series
                    ? "SELECT max(seq) FROM heartbeat_series WHERE $1::bigint IS NOT NULL AND \(own)"
                    : "SELECT max(seq) FROM samples WHERE type_id = $1 AND \(own)"
                for sql in [rows, "SELECT max(seq) FROM tombstones WHERE type_id = $1 AND \(own)"] {
                    let result = try connection.query(sql, ["\(typeID)", writer])
                    if result.count > 0 { latest = max(latest, result.int64(0, 0)) }
                }
            }
            return latest
        }
    }

    public func changes(of type: HealthType, since anchor: Int64?, limit: Int, as caller: Caller) throws -> ChangeSet {
        try withConnection { connection in
            let start = anchor ?? 0
            guard let typeID = try existingTypeID(connection, type.identifier) else {
                // Nothing of the type was ever written; the call is logged all the same.
                try log(connection, caller, .changes, type: type.identifier, count: 0, denied: false)
                return ChangeSet(added: [], deleted: [], anchor: start, hasMore: false)
            }
            if type.kind == .workout || type.kind == .correlation {
                return try objectChanges(connection, of: type, typeID: typeID, since: start, limit: limit, as: caller)
            }
            let readAll = try canRead(connection, caller, type)
            let writer: String? = readAll ? nil : caller.description
            let count = "\(max(0, limit) + 1)"
            var rows: [Row] = []
            var heartbeats: [HeartbeatRow] = []
            if type.aggregation == .series {
                heartbeats = try heartbeatChanges(connection, after: start, limit: limit + 1, writer: writer)
            } else {
                let added = try connection.query(
                    "SELECT \(Self.rowColumns) WHERE s.type_id = $1 AND s.seq > $2 AND ($3::text IS NULL OR s.writer = $3) "
                        + "ORDER BY s.seq LIMIT $4", ["\(typeID)", "\(start)", writer, count])
                rows = readRows(added, type: type)
            }
            let tombstones = try connection.query(
                """
                SELECT seq, uuid FROM tombstones WHERE type_id = $1 AND seq > $2 AND ($3::text IS NULL OR writer = $3)
                ORDER BY seq LIMIT $4
                """, ["\(typeID)", "\(start)", writer, count])
            var deleted: [(Int64, UUID)] = []
            for row in 0..<tombstones.count {
                if let id = tombstones.text(row, 1).flatMap(UUID.init(uuidString:)) {
                    deleted.append((tombstones.int64(row, 0), id))
                }
            }
            // Merge both streams by sequence and cut at `limit`.
            let events = (rows.map(\.seq) + heartbeats.map(\.seq) + deleted.map(\.0)).sorted()
            let kept = events.prefix(max(0, limit))
            let newAnchor = kept.last ?? start
            try log(connection, caller, .changes, type: type.identifier, count: kept.count, denied: false)
            return ChangeSet(
                added: rows.filter { $0.seq <= newAnchor }.map(\.sample),
                heartbeatSeries: heartbeats.filter { $0.seq <= newAnchor }.map(\.series),
                deleted: deleted.filter { $0.0 <= newAnchor }.map(\.1), anchor: newAnchor,
                hasMore: events.count > kept.count)
        }
    }
}
