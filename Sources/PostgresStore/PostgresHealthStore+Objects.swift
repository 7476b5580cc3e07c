public import Foundation
public import Health
internal import StoreEngine

/// Correlations and workouts (`docs/store-semantics.md`, items 27 and 28), in the `objects` and `object_members`
/// tables (migration 6), as the SQLite engine keeps them (its migration 14).
extension PostgresHealthStore {
    private static let objectColumns = """
        o.uuid, o.start_ms, o.end_ms, o.start_offset_s, so.identifier, so.version, o.device_id,
        d.name, d.manufacturer, d.model, d.hardware, d.firmware, d.software, d.serial, d.local_id,
        sj.name, o.metadata, o.body, o.seq, o.writer
        FROM objects o
        JOIN sources so ON so.id = o.source_id
        LEFT JOIN devices d ON d.id = o.device_id
        LEFT JOIN subjects sj ON sj.id = o.subject_id
        """

    private func readObjects(_ rows: PostgresRows, type: HealthType) -> [StoredObject] {
        (0..<rows.count).compactMap { row in
            guard let id = rows.text(row, 0).flatMap(UUID.init(uuidString:)) else { return nil }
            let version = rows.text(row, 5) ?? ""
            return StoredObject(
                id: id, type: type, start: Instant(milliseconds: rows.int64(row, 1)),
                end: Instant(milliseconds: rows.int64(row, 2)),
                startOffsetSeconds: Int32(clamping: rows.int64(row, 3)),
                source: Source(identifier: rows.text(row, 4) ?? "", version: version.isEmpty ? nil : version),
                device: rows.int64(row, 6) == 0 ? nil : Self.readDevice(rows, row, from: 7),
                subject: rows.text(row, 15), metadata: MetadataCoding.decode(rows.text(row, 16)),
                body: rows.text(row, 17), seq: rows.int64(row, 18), writer: rows.text(row, 19) ?? "")
        }
    }

    // MARK: - Correlations

    public func save(_ correlations: [Correlation], as caller: Caller) throws -> [WriteOutcome] {
        var memberTypes: [HealthType] = []
        for (index, correlation) in correlations.enumerated() {
            if let reason = correlation.invalidityReason { throw InvalidSampleError(index: index, reason: reason) }
            for type in correlation.memberTypes where !memberTypes.contains(type) { memberTypes.append(type) }
        }
        try requireShare(caller, memberTypes)
        return try writeTransaction { connection in
            var outcomes: [WriteOutcome] = []
            var counts: [String: Int] = [:]
            for (index, correlation) in correlations.enumerated() {
                outcomes.append(try save(connection, correlation, index: index, caller: caller))
                counts[correlation.type.identifier, default: 0] += 1
            }
            for (type, count) in counts.sorted(by: { $0.key < $1.key }) {
                try log(connection, caller, .save, type: type, count: count, denied: false)
            }
            return outcomes
        }
    }

    private func save(_ connection: PostgresConnection, _ correlation: Correlation, index: Int, caller: Caller)
        throws -> WriteOutcome
    {
        if let existing = try storedObjectHeader(connection, correlation.id) {
            guard existing.type == correlation.type.identifier, existing.start == correlation.start.milliseconds,
                existing.end == correlation.end.milliseconds
            else {
                throw InvalidSampleError(index: index, reason: "uuid \(correlation.id) already names another object")
            }
            let stored = try members(
                connection, of: correlation.id, from: correlation.start, to: correlation.end, .owner)
            let same =
                Set(stored.map { CorrelationMember($0) }) == Set(correlation.objects.map { CorrelationMember($0) })
                && existing.subject == correlation.subject
            return same ? .duplicate : .conflict
        }
        _ = try checkedTypes(correlation.objects)
        let memberOutcomes = try insertSamples(connection, correlation.objects, caller)
        var members = correlation.objects
        for (position, outcome) in memberOutcomes.enumerated() {
            guard outcome == .inserted || outcome == .duplicate || outcome == .replaced else {
                throw InvalidSampleError(
                    index: index,
                    reason: "sample \(position + 1) of the correlation conflicts with a stored sample of the same "
                        + "type, source, device, start and end")
            }
            // A member stored already is that sample, whatever id it was given this time.
            if outcome == .duplicate {
                members[position].id = try storedID(connection, duplicating: members[position])
            }
            if let other = try correlationOwning(connection, members[position].id) {
                throw InvalidSampleError(
                    index: index,
                    reason: "sample \(position + 1) of the correlation already belongs to correlation \(other)")
            }
        }
        try insertObject(
            connection, id: correlation.id, type: correlation.type, start: correlation.start, end: correlation.end,
            offset: correlation.startOffsetSeconds, source: correlation.source, device: correlation.device,
            subject: correlation.subject, metadata: correlation.metadata, body: nil, writer: caller.description)
        for member in members { try insertMember(connection, of: correlation.id, member) }
        return .inserted
    }

    public func correlations(_ query: SampleQuery, as caller: Caller) throws -> CorrelationPage {
        try withConnection { connection in
            guard query.type.kind == .correlation else {
                try log(connection, caller, .query, type: query.type.identifier, count: 0, denied: false)
                return CorrelationPage(correlations: [], next: nil)
            }
            var readable: [String: Bool] = [:]
            let found = try objects(connection, query, caller: caller, ownOnly: false) { object in
                try isVisible(connection, object, caller, &readable)
            }
            let correlations = try found.objects.map { object in
                object.correlation(try members(connection, of: object, caller))
            }
            try log(connection, caller, .query, type: query.type.identifier, count: correlations.count, denied: false)
            return CorrelationPage(correlations: correlations, next: found.next)
        }
    }

    /// Whether `caller` may see correlation `object`: the owner always, an app when it saved it or may read every
    /// type of its members (`readable` remembers grants within one call).
    private func isVisible(
        _ connection: PostgresConnection, _ object: StoredObject, _ caller: Caller, _ readable: inout [String: Bool]
    ) throws -> Bool {
        guard case .app(let app) = caller, object.writer != app else { return true }
        for (_, type) in try memberKeys(connection, of: object.id) {
            if readable[type] == nil {
                readable[type] = try HealthTypeCatalog.type(type).map { try canRead(connection, caller, $0) } ?? false
            }
            if readable[type] != true { return false }
        }
        return true
    }

    private func canReadEveryMember(_ connection: PostgresConnection, of type: HealthType, _ caller: Caller) throws
        -> Bool
    {
        guard case .app = caller else { return true }
        for member in HealthTypeCatalog.all where Correlation.accepts(member, in: type) {
            guard try canRead(connection, caller, member) else { return false }
        }
        return true
    }

    private func members(_ connection: PostgresConnection, of object: StoredObject, _ caller: Caller) throws
        -> [QuantitySample]
    {
        try members(connection, of: object.id, from: object.start, to: object.end, caller)
    }

    private func members(
        _ connection: PostgresConnection, of id: UUID, from start: Instant, to end: Instant, _ caller: Caller
    ) throws -> [QuantitySample] {
        let keys = try memberKeys(connection, of: id)
        let ids = Set(keys.map(\.id))
        var types: [String] = []
        for (_, type) in keys where !types.contains(type) { types.append(type) }
        var members: [QuantitySample] = []
        for identifier in types {
            guard let type = HealthTypeCatalog.type(identifier) else { continue }
            let rows = try rows(
                connection, of: type, from: start, to: end, sources: nil, devices: nil, subjects: nil, caller: caller)
            members += rows.map(\.sample).filter { ids.contains($0.id) }
        }
        return members
    }

    // MARK: - Workouts

    public func save(_ workouts: [Workout], as caller: Caller) throws -> [WriteOutcome] {
        for (index, workout) in workouts.enumerated() {
            if let reason = workout.invalidityReason { throw InvalidSampleError(index: index, reason: reason) }
        }
        if !workouts.isEmpty {
            try requireShare(caller, [.workout] + (workouts.contains { !$0.routes.isEmpty } ? [.workoutRoute] : []))
        }
        return try writeTransaction { connection in
            var outcomes: [WriteOutcome] = []
            for (index, workout) in workouts.enumerated() {
                let body = ObjectCoding.encode(workout)
                if let existing = try storedObjectHeader(connection, workout.id) {
                    guard existing.type == HealthType.workout.identifier,
                        existing.start == workout.start.milliseconds, existing.end == workout.end.milliseconds
                    else {
                        throw InvalidSampleError(
                            index: index, reason: "uuid \(workout.id) already names another object")
                    }
                    let same =
                        existing.body == body && existing.subject == workout.subject
                        && MetadataCoding.decode(existing.metadata) == workout.metadata
                    outcomes.append(same ? .duplicate : .conflict)
                    continue
                }
                try insertObject(
                    connection, id: workout.id, type: .workout, start: workout.start, end: workout.end,
                    offset: workout.startOffsetSeconds, source: workout.source, device: workout.device,
                    subject: workout.subject, metadata: workout.metadata, body: body, writer: caller.description)
                outcomes.append(.inserted)
            }
            if !workouts.isEmpty {
                try log(
                    connection, caller, .save, type: HealthType.workout.identifier, count: workouts.count,
                    denied: false)
            }
            return outcomes
        }
    }

    /// A batch's workouts, inside its transaction (``SampleBatch/workouts``): saved as `save([Workout])` saves them
    /// (errors name a workout by its place), then each but a conflicting one given those of its samples that are
    /// stored and readable by `caller`.
    func save(_ entries: [SampleBatch.WorkoutEntry], as caller: Caller) throws -> [WriteOutcome] {
        let outcomes = try save(entries.map(\.workout), as: caller)
        try writeTransaction { connection in
            var added = 0
            for (entry, outcome) in zip(entries, outcomes) where outcome != .conflict {
                for id in entry.sampleIDs {
                    guard let sample = try readableSample(connection, id, caller) else { continue }
                    if try insertMember(connection, of: entry.workout.id, sample) { added += 1 }
                }
            }
            if added > 0 {
                try log(connection, caller, .save, type: HealthType.workout.identifier, count: added, denied: false)
            }
        }
        return outcomes
    }

    public func workouts(_ query: SampleQuery, as caller: Caller) throws -> WorkoutPage {
        try withConnection { connection in
            guard query.type.kind == .workout else {
                try log(connection, caller, .query, type: query.type.identifier, count: 0, denied: false)
                return WorkoutPage(workouts: [], next: nil)
            }
            let ownOnly = try !canRead(connection, caller, .workout)
            let found = try objects(connection, query, caller: caller, ownOnly: ownOnly) { _ in true }
            try log(
                connection, caller, .query, type: HealthType.workout.identifier, count: found.objects.count,
                denied: false)
            return WorkoutPage(
                workouts: StoredObject.workouts(
                    found.objects, for: caller, routesReadable: try canRead(connection, caller, .workoutRoute)),
                next: found.next)
        }
    }

    public func add(_ sampleIDs: [UUID], to workout: UUID, as caller: Caller) throws -> Int {
        let found: [QuantitySample] = try withConnection { connection in
            guard let header = try storedObjectHeader(connection, workout),
                header.type == HealthType.workout.identifier,
                caller == .owner || header.writer == caller.description
            else {
                try log(connection, caller, .save, type: HealthType.workout.identifier, count: 0, denied: true)
                throw InvalidSampleError(index: 0, reason: "no workout \(workout) that this caller saved")
            }
            return try sampleIDs.enumerated().map { index, id in
                guard let sample = try readableSample(connection, id, caller) else {
                    throw InvalidSampleError(index: index, reason: "no sample \(id)")
                }
                return sample
            }
        }
        return try writeTransaction { connection in
            var added = 0
            for sample in found where try insertMember(connection, of: workout, sample) { added += 1 }
            try log(connection, caller, .save, type: HealthType.workout.identifier, count: added, denied: false)
            return added
        }
    }

    public func workoutSampleIDs(_ workout: UUID, as caller: Caller) throws -> [String: [UUID]] {
        try withConnection { connection in
            guard let header = try storedObjectHeader(connection, workout),
                header.type == HealthType.workout.identifier,
                try canRead(connection, caller, .workout) || header.writer == caller.description
            else { return [:] }
            var ids: [String: [UUID]] = [:]
            for (id, type) in try memberKeys(connection, of: workout) {
                guard let known = HealthTypeCatalog.type(type), try canRead(connection, caller, known) else {
                    continue
                }
                ids[type, default: []].append(id)
            }
            return ids
        }
    }

    private func readableSample(_ connection: PostgresConnection, _ id: UUID, _ caller: Caller) throws
        -> QuantitySample?
    {
        let lookup = try connection.query(
            """
            SELECT t.identifier, s.start_ms, s.end_ms, s.writer FROM samples s JOIN types t ON t.id = s.type_id
            WHERE s.uuid = $1::uuid
            """, [id.uuidString])
        guard lookup.count > 0, let type = HealthTypeCatalog.type(lookup.text(0, 0) ?? "") else { return nil }
        if case .app(let app) = caller, lookup.text(0, 3) != app, try !canRead(connection, caller, type) {
            return nil
        }
        return try rows(
            connection, of: type, from: Instant(milliseconds: lookup.int64(0, 1)),
            to: Instant(milliseconds: lookup.int64(0, 2)), sources: nil, devices: nil, subjects: nil, caller: caller
        ).first { $0.sample.id == id }?.sample
    }

    /// The ids of the samples of `type` associated with `workout` and the interval they span, or `nil`.
    func workoutMembers(_ connection: PostgresConnection, _ workout: UUID, type: HealthType) throws -> (
        ids: Set<UUID>, from: Instant, to: Instant
    )? {
        let rows = try connection.query(
            "SELECT sample_uuid, start_ms, end_ms FROM object_members WHERE object_uuid = $1::uuid AND type = $2",
            [workout.uuidString, type.identifier])
        var ids: Set<UUID> = []
        var from = Int64.max
        var to = Int64.min
        for row in 0..<rows.count {
            guard let id = rows.text(row, 0).flatMap(UUID.init(uuidString:)) else { continue }
            ids.insert(id)
            from = min(from, rows.int64(row, 1))
            to = max(to, rows.int64(row, 2))
        }
        guard !ids.isEmpty else { return nil }
        return (ids, Instant(milliseconds: from), Instant(milliseconds: to))
    }

    // MARK: - Deletion and changes

    /// Deletes object `id` when it is a correlation (with its members) or a workout (keeping its samples) that
    /// `caller` may delete; returns how many objects went, or `nil` when `id` names no object.
    func deleteObject(_ connection: PostgresConnection, _ id: UUID, _ caller: Caller) throws -> Int? {
        guard let header = try storedObjectHeader(connection, id) else { return nil }
        if case .app(let app) = caller, header.writer != app { return 0 }
        var deleted = 0
        if let type = HealthTypeCatalog.type(header.type), type.kind == .correlation {
            for (member, _) in try memberKeys(connection, of: id) {
                let stored = try connection.query(
                    "SELECT type_id FROM samples WHERE uuid = $1::uuid", [member.uuidString])
                guard stored.count > 0 else { continue }
                try remove(
                    connection, uuid: member, typeID: stored.int64(0, 0), writer: caller.description, replacedBy: nil)
                deleted += 1
            }
        }
        try connection.query("DELETE FROM object_members WHERE object_uuid = $1::uuid", [id.uuidString])
        try connection.query("DELETE FROM objects WHERE uuid = $1::uuid", [id.uuidString])
        try tombstone(connection, uuid: id, typeID: header.typeID, writer: caller.description, replacedBy: nil)
        return deleted + 1
    }

    /// Before sample `id` is deleted: when it is a correlation's member, deletes that correlation (with every
    /// member) and returns the count; otherwise ends its workout associations and returns `nil`.
    func deleteMemberships(_ connection: PostgresConnection, of id: UUID, _ caller: Caller) throws -> Int? {
        if let correlation = try correlationOwning(connection, id) {
            return try deleteObject(connection, correlation, caller)
        }
        try connection.query("DELETE FROM object_members WHERE sample_uuid = $1::uuid", [id.uuidString])
        return nil
    }

    /// New correlations or workouts of `type` after `anchor`, with the tombstones of deleted ones.
    func objectChanges(
        _ connection: PostgresConnection, of type: HealthType, typeID: Int64, since anchor: Int64, limit asked: Int,
        as caller: Caller
    ) throws -> ChangeSet {
        let limit = ObjectChanges.rowLimit(of: type, asked: asked)
        let readAll =
            try type.kind == .workout
            ? canRead(connection, caller, type) : canReadEveryMember(connection, of: type, caller)
        let ownObjects: String? = type.kind == .workout && !readAll ? caller.description : nil
        let count = "\(max(0, limit) + 1)"
        let added = try connection.query(
            "SELECT \(Self.objectColumns) WHERE o.type_id = $1 AND o.seq > $2 AND ($3::text IS NULL OR o.writer = $3) "
                + "ORDER BY o.seq LIMIT $4", ["\(typeID)", "\(anchor)", ownObjects, count])
        let objects = readObjects(added, type: type)
        let tombstones = try connection.query(
            """
            SELECT seq, uuid FROM tombstones WHERE type_id = $1 AND seq > $2 AND ($3::text IS NULL OR writer = $3)
            ORDER BY seq LIMIT $4
            """, ["\(typeID)", "\(anchor)", readAll ? nil : caller.description, count])
        var deleted: [(seq: Int64, id: UUID)] = []
        for row in 0..<tombstones.count {
            if let id = tombstones.text(row, 1).flatMap(UUID.init(uuidString:)) {
                deleted.append((tombstones.int64(row, 0), id))
            }
        }
        let window = ObjectChanges(of: type, objects: objects, deleted: deleted, since: anchor, limit: limit)
        var readable: [String: Bool] = [:]
        let shown = try window.objects.filter { object in
            try type.kind == .workout || isVisible(connection, object, caller, &readable)
        }
        try log(connection, caller, .changes, type: type.identifier, count: window.events, denied: false)
        var changes = ChangeSet(added: [], deleted: window.deleted, anchor: window.anchor, hasMore: window.hasMore)
        if type.kind == .workout {
            changes.workouts = StoredObject.workouts(
                shown, for: caller, routesReadable: try canRead(connection, caller, .workoutRoute))
        } else {
            changes.correlations = try shown.map { $0.correlation(try members(connection, of: $0, caller)) }
        }
        return changes
    }

    // MARK: - Rows

    private func objects(
        _ connection: PostgresConnection, _ query: SampleQuery, caller: Caller, ownOnly: Bool,
        include: (StoredObject) throws -> Bool
    ) throws -> (objects: [StoredObject], next: SampleCursor?) {
        guard let typeID = try existingTypeID(connection, query.type.identifier) else { return ([], nil) }
        var matched = ObjectPage(limit: query.limit)
        var cursor = query.cursor
        let rows = ObjectPage.rowsPerRead(query.type)
        while !matched.isFull {
            var conditions = PostgresConditions()
            conditions.add("o.type_id = ?", ["\(typeID)"])
            if let to = query.to { conditions.add("o.start_ms <= ?", ["\(to.milliseconds)"]) }
            if let from = query.from { conditions.add("o.end_ms >= ?", ["\(from.milliseconds)"]) }
            conditions.add("so.identifier", in: query.sources)
            conditions.add("d.key", in: query.devices)
            conditions.add("sj.name", in: query.subjects)
            if ownOnly { conditions.add("o.writer = ?", [caller.description]) }
            if let cursor {
                conditions.add(
                    "(o.start_ms, o.end_ms, o.uuid) \(query.ascending ? ">" : "<") (?, ?, ?::uuid)",
                    ["\(cursor.start.milliseconds)", "\(cursor.end.milliseconds)", cursor.id])
            }
            let order = query.ascending ? "ASC" : "DESC"
            let page = readObjects(
                try connection.query(
                    "SELECT \(Self.objectColumns) WHERE \(conditions.sql) "
                        + "ORDER BY o.start_ms \(order), o.end_ms \(order), o.uuid \(order) LIMIT \(rows)",
                    conditions.parameters), type: query.type)
            for object in page where !matched.isFull {
                guard query.matchesTime(start: object.start, end: object.end), query.matchesMetadata(object.metadata),
                    try include(object)
                else { continue }
                matched.add(object)
            }
            guard let last = page.last, page.count == rows else { break }
            cursor = last.cursor
        }
        return (matched.objects, matched.next)
    }

    private func storedObjectHeader(_ connection: PostgresConnection, _ id: UUID) throws -> (
        type: String, typeID: Int64, start: Int64, end: Int64, subject: String?, writer: String, body: String?,
        metadata: String?
    )? {
        let rows = try connection.query(
            """
            SELECT t.identifier, o.type_id, o.start_ms, o.end_ms, sj.name, o.writer, o.body, o.metadata
            FROM objects o JOIN types t ON t.id = o.type_id LEFT JOIN subjects sj ON sj.id = o.subject_id
            WHERE o.uuid = $1::uuid
            """, [id.uuidString])
        guard rows.count > 0 else { return nil }
        return (
            rows.text(0, 0) ?? "", rows.int64(0, 1), rows.int64(0, 2), rows.int64(0, 3), rows.text(0, 4),
            rows.text(0, 5) ?? "", rows.text(0, 6), rows.text(0, 7)
        )
    }

    private func memberKeys(_ connection: PostgresConnection, of object: UUID) throws -> [(id: UUID, type: String)] {
        let rows = try connection.query(
            "SELECT sample_uuid, type FROM object_members WHERE object_uuid = $1::uuid ORDER BY type, sample_uuid",
            [object.uuidString])
        return (0..<rows.count).compactMap { row in
            rows.text(row, 0).flatMap(UUID.init(uuidString:)).map { ($0, rows.text(row, 1) ?? "") }
        }
    }

    private func correlationOwning(_ connection: PostgresConnection, _ id: UUID) throws -> UUID? {
        let rows = try connection.query(
            """
            SELECT m.object_uuid, t.identifier FROM object_members m JOIN objects o ON o.uuid = m.object_uuid
            JOIN types t ON t.id = o.type_id WHERE m.sample_uuid = $1::uuid
            """, [id.uuidString])
        for row in 0..<rows.count where HealthTypeCatalog.type(rows.text(row, 1) ?? "")?.kind == .correlation {
            return rows.text(row, 0).flatMap(UUID.init(uuidString:))
        }
        return nil
    }

    private func insertObject(
        _ connection: PostgresConnection, id: UUID, type: HealthType, start: Instant, end: Instant, offset: Int32,
        source: Source, device: Device?, subject: String?, metadata: [String: MetadataValue], body: String?,
        writer: String
    ) throws {
        try connection.query(
            """
            INSERT INTO objects (uuid, type_id, start_ms, end_ms, start_offset_s, source_id, device_id, subject_id,
                writer, seq, metadata, body)
            VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
            """,
            [
                id.uuidString, "\(try typeID(connection, type.identifier))", "\(start.milliseconds)",
                "\(end.milliseconds)", "\(offset)", "\(try sourceID(connection, source))",
                "\(try deviceID(connection, device))", "\(try subjectID(connection, subject))", writer,
                "\(nextSequence())", MetadataCoding.encode(metadata), body,
            ])
    }

    @discardableResult
    private func insertMember(_ connection: PostgresConnection, of object: UUID, _ sample: QuantitySample) throws
        -> Bool
    {
        try connection.query(
            """
            INSERT INTO object_members (object_uuid, sample_uuid, type, start_ms, end_ms)
            VALUES ($1::uuid, $2::uuid, $3, $4, $5) ON CONFLICT DO NOTHING
            """,
            [
                object.uuidString, sample.id.uuidString, sample.type.identifier, "\(sample.start.milliseconds)",
                "\(sample.end.milliseconds)",
            ]
        ).affected > 0
    }
}
