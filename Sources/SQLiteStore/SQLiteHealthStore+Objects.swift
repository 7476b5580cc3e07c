public import Foundation
public import Health
internal import StoreEngine

/// Correlations and workouts (`docs/store-semantics.md`, items 27 and 28), in the `objects` and `object_members`
/// tables (migration 14). A correlation's members, and a workout's associated samples, are ordinary samples; the
/// member table names them by id, with their type and interval, so that they are found through the type's own
/// sample query (which applies the caller's grants).
extension SQLiteHealthStore {
    private static let objectColumns = """
        o.uuid, o.start_ms, o.end_ms, o.start_offset_s, so.identifier, so.version, o.device_id,
        d.name, d.manufacturer, d.model, d.hardware, d.firmware, d.software, d.serial, d.local_id,
        sj.name, o.metadata, o.body, o.seq, o.writer
        FROM objects o
        JOIN sources so ON so.id = o.source_id
        LEFT JOIN devices d ON d.id = o.device_id
        LEFT JOIN subjects sj ON sj.id = o.subject_id
        """

    private func readObject(_ statement: SQLiteStatement, type: HealthType) -> StoredObject? {
        guard let id = statement.blob(0).flatMap(UUID.init(bytes:)) else { return nil }
        let version = statement.text(5) ?? ""
        return StoredObject(
            id: id, type: type, start: Instant(milliseconds: statement.int64(1)),
            end: Instant(milliseconds: statement.int64(2)), startOffsetSeconds: Int32(clamping: statement.int64(3)),
            source: Source(identifier: statement.text(4) ?? "", version: version.isEmpty ? nil : version),
            device: statement.int64(6) == 0 ? nil : Self.readDevice(statement, from: 7), subject: statement.text(15),
            metadata: MetadataCoding.decode(statement.text(16)), body: statement.text(17), seq: statement.int64(18),
            writer: statement.text(19) ?? "")
    }

    // MARK: - Correlations

    public func save(_ correlations: [Correlation], as caller: Caller) throws -> [WriteOutcome] {
        defer { connection.resetCachedStatements() }
        var memberTypes: [HealthType] = []
        for (index, correlation) in correlations.enumerated() {
            if let reason = correlation.invalidityReason { throw InvalidSampleError(index: index, reason: reason) }
            for type in correlation.memberTypes where !memberTypes.contains(type) { memberTypes.append(type) }
        }
        for type in memberTypes { try requireShare(caller, type) }
        return try writeTransaction {
            var outcomes: [WriteOutcome] = []
            var counts: [String: Int] = [:]
            for (index, correlation) in correlations.enumerated() {
                outcomes.append(try save(correlation, index: index, caller: caller))
                counts[correlation.type.identifier, default: 0] += 1
            }
            for (type, count) in counts.sorted(by: { $0.key < $1.key }) {
                try log(caller, .save, type: type, count: count, denied: false)
            }
            return outcomes
        }
    }

    private func save(_ correlation: Correlation, index: Int, caller: Caller) throws -> WriteOutcome {
        if let existing = try storedObjectHeader(correlation.id) {
            guard existing.type == correlation.type.identifier, existing.start == correlation.start.milliseconds,
                existing.end == correlation.end.milliseconds
            else {
                throw InvalidSampleError(index: index, reason: "uuid \(correlation.id) already names another object")
            }
            let stored = try members(
                of: correlation.id, from: correlation.start, to: correlation.end, .owner)
            let same =
                Set(stored.map { CorrelationMember($0) }) == Set(correlation.objects.map { CorrelationMember($0) })
                && existing.subject == correlation.subject
            return same ? .duplicate : .conflict
        }
        // The members, checked already, as any samples; each must be new or the very sample already stored, and
        // belong to no other correlation.
        let typeCounts = try checkedTypeCounts(correlation.objects)
        let memberOutcomes = try insertSamples(correlation.objects, typeCounts, caller)
        var members = correlation.objects
        for (position, outcome) in memberOutcomes.enumerated() {
            guard outcome == .inserted || outcome == .duplicate || outcome == .replaced else {
                throw InvalidSampleError(
                    index: index,
                    reason: "sample \(position + 1) of the correlation conflicts with a stored sample of the same "
                        + "type, source, device, start and end")
            }
            // A member stored already is that sample, whatever id it was given this time.
            if outcome == .duplicate { members[position].id = try storedID(duplicating: members[position]) }
            if let other = try correlationOwning(members[position].id) {
                throw InvalidSampleError(
                    index: index,
                    reason: "sample \(position + 1) of the correlation already belongs to correlation \(other)")
            }
        }
        try insertObject(
            id: correlation.id, type: correlation.type, start: correlation.start, end: correlation.end,
            offset: correlation.startOffsetSeconds, source: correlation.source, device: correlation.device,
            subject: correlation.subject, metadata: correlation.metadata, body: nil, writer: caller.description)
        for member in members { try insertMember(of: correlation.id, member) }
        return .inserted
    }

    public func correlations(_ query: SampleQuery, as caller: Caller) throws -> CorrelationPage {
        defer { connection.resetCachedStatements() }
        guard query.type.kind == .correlation else {
            try log(caller, .query, type: query.type.identifier, count: 0, denied: false)
            return CorrelationPage(correlations: [], next: nil)
        }
        var visible = CorrelationVisibility()
        let found = try objects(query, caller: caller, ownOnly: false) { object in
            try isVisible(object, caller, &visible)
        }
        let correlations = try found.objects.map { object in object.correlation(try members(of: object, caller)) }
        try log(caller, .query, type: query.type.identifier, count: correlations.count, denied: false)
        return CorrelationPage(correlations: correlations, next: found.next)
    }

    /// Read grants per member type, looked up once per call.
    struct CorrelationVisibility {
        var readable: [String: Bool] = [:]
    }

    /// Whether `caller` may see correlation `object`: the owner always, an app when it saved it or may read every
    /// type of its members.
    private func isVisible(_ object: StoredObject, _ caller: Caller, _ visibility: inout CorrelationVisibility)
        throws -> Bool
    {
        guard case .app(let app) = caller, object.writer != app else { return true }
        for (_, type) in try memberKeys(of: object.id) {
            if visibility.readable[type] == nil {
                visibility.readable[type] = try HealthTypeCatalog.type(type).map { try canRead(caller, $0) } ?? false
            }
            if visibility.readable[type] != true { return false }
        }
        return true
    }

    /// Whether `caller` may read every type that correlations of `type` accept.
    private func canReadEveryMember(of type: HealthType, _ caller: Caller) throws -> Bool {
        guard case .app = caller else { return true }
        for member in HealthTypeCatalog.all where Correlation.accepts(member, in: type) {
            guard try canRead(caller, member) else { return false }
        }
        return true
    }

    /// The stored members of `object`, as `caller` may read them, in the order of their types' queries.
    private func members(of object: StoredObject, _ caller: Caller) throws -> [QuantitySample] {
        try members(of: object.id, from: object.start, to: object.end, caller)
    }

    private func members(of id: UUID, from start: Instant, to end: Instant, _ caller: Caller) throws
        -> [QuantitySample]
    {
        let keys = try memberKeys(of: id)
        let ids = Set(keys.map(\.id))
        var members: [QuantitySample] = []
        var types: [String] = []
        for (_, type) in keys where !types.contains(type) { types.append(type) }
        for identifier in types {
            guard let type = HealthTypeCatalog.type(identifier) else { continue }
            let rows = try rows(
                of: type, from: start, to: end, sources: nil, devices: nil, subjects: nil, caller: caller)
            members += rows.map(\.sample).filter { ids.contains($0.id) }
        }
        return members
    }

    // MARK: - Workouts

    public func save(_ workouts: [Workout], as caller: Caller) throws -> [WriteOutcome] {
        defer { connection.resetCachedStatements() }
        for (index, workout) in workouts.enumerated() {
            if let reason = workout.invalidityReason { throw InvalidSampleError(index: index, reason: reason) }
        }
        if !workouts.isEmpty { try requireShare(caller, .workout) }
        if workouts.contains(where: { !$0.routes.isEmpty }) { try requireShare(caller, .workoutRoute) }
        return try writeTransaction {
            var outcomes: [WriteOutcome] = []
            for (index, workout) in workouts.enumerated() {
                let body = ObjectCoding.encode(workout)
                if let existing = try storedObjectHeader(workout.id) {
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
                    id: workout.id, type: .workout, start: workout.start, end: workout.end,
                    offset: workout.startOffsetSeconds, source: workout.source, device: workout.device,
                    subject: workout.subject, metadata: workout.metadata, body: body, writer: caller.description)
                outcomes.append(.inserted)
            }
            if !workouts.isEmpty {
                try log(caller, .save, type: HealthType.workout.identifier, count: workouts.count, denied: false)
            }
            return outcomes
        }
    }

    /// A batch's workouts, inside its transaction (``SampleBatch/workouts``): saved as `save([Workout])` saves them
    /// (errors name a workout by its place), then each but a conflicting one given those of its samples that are
    /// stored and readable by `caller`.
    func save(_ entries: [SampleBatch.WorkoutEntry], as caller: Caller) throws -> [WriteOutcome] {
        let outcomes = try save(entries.map(\.workout), as: caller)
        try writeTransaction {
            var added = 0
            for (entry, outcome) in zip(entries, outcomes) where outcome != .conflict {
                for id in entry.sampleIDs {
                    guard let sample = try readableSample(id, caller) else { continue }
                    if try insertMember(of: entry.workout.id, sample) { added += 1 }
                }
            }
            if added > 0 { try log(caller, .save, type: HealthType.workout.identifier, count: added, denied: false) }
        }
        return outcomes
    }

    public func workouts(_ query: SampleQuery, as caller: Caller) throws -> WorkoutPage {
        defer { connection.resetCachedStatements() }
        guard query.type.kind == .workout else {
            try log(caller, .query, type: query.type.identifier, count: 0, denied: false)
            return WorkoutPage(workouts: [], next: nil)
        }
        let ownOnly = try !canRead(caller, .workout)
        let found = try objects(query, caller: caller, ownOnly: ownOnly) { _ in true }
        try log(caller, .query, type: HealthType.workout.identifier, count: found.objects.count, denied: false)
        return WorkoutPage(
            workouts: StoredObject.workouts(
                found.objects, for: caller, routesReadable: try canRead(caller, .workoutRoute)),
            next: found.next)
    }

    public func add(_ sampleIDs: [UUID], to workout: UUID, as caller: Caller) throws -> Int {
        defer { connection.resetCachedStatements() }
        guard let header = try storedObjectHeader(workout), header.type == HealthType.workout.identifier,
            caller == .owner || header.writer == caller.description
        else {
            try log(caller, .save, type: HealthType.workout.identifier, count: 0, denied: true)
            throw InvalidSampleError(index: 0, reason: "no workout \(workout) that this caller saved")
        }
        var found: [QuantitySample] = []
        for (index, id) in sampleIDs.enumerated() {
            guard let sample = try readableSample(id, caller) else {
                throw InvalidSampleError(index: index, reason: "no sample \(id)")
            }
            found.append(sample)
        }
        return try writeTransaction {
            var added = 0
            for sample in found where try insertMember(of: workout, sample) { added += 1 }
            try log(caller, .save, type: HealthType.workout.identifier, count: added, denied: false)
            return added
        }
    }

    public func workoutSampleIDs(_ workout: UUID, as caller: Caller) throws -> [String: [UUID]] {
        defer { connection.resetCachedStatements() }
        guard let header = try storedObjectHeader(workout), header.type == HealthType.workout.identifier,
            try canRead(caller, .workout) || header.writer == caller.description
        else { return [:] }
        var ids: [String: [UUID]] = [:]
        for (id, type) in try memberKeys(of: workout) {
            guard let known = HealthTypeCatalog.type(type), try canRead(caller, known) else { continue }
            ids[type, default: []].append(id)
        }
        return ids
    }

    /// The stored quantity or category sample `id` when `caller` may read it.
    private func readableSample(_ id: UUID, _ caller: Caller) throws -> QuantitySample? {
        let lookup = try connection.cached(
            """
            SELECT t.identifier, s.start_ms, s.end_ms, s.writer FROM samples s JOIN types t ON t.id = s.type_id
            WHERE s.uuid = ?1
            """)
        try lookup.bind(1, id.bytes)
        if try lookup.step() {
            guard let type = HealthTypeCatalog.type(lookup.text(0) ?? "") else { return nil }
            let writer = lookup.text(3)
            let start = Instant(milliseconds: lookup.int64(1))
            let end = Instant(milliseconds: lookup.int64(2))
            if case .app(let app) = caller, writer != app, try !canRead(caller, type) { return nil }
            return try rows(of: type, from: start, to: end, sources: nil, devices: nil, subjects: nil, caller: caller)
                .first { $0.sample.id == id }?.sample
        }
        guard let sample = try seriesSample(id) else { return nil }
        return try canRead(caller, sample.type) ? sample : nil
    }

    /// The samples of `query.type` associated with `query.workout` that `caller` may read (``samples(_:as:)``
    /// with a workout predicate): the ids and the interval they span, or `nil` when there are none.
    func workoutMembers(_ workout: UUID, type: HealthType) throws -> (ids: Set<UUID>, from: Instant, to: Instant)? {
        let statement = try connection.cached(
            "SELECT sample_uuid, start_ms, end_ms FROM object_members WHERE object_uuid = ?1 AND type = ?2")
        try statement.bind(1, workout.bytes)
        try statement.bind(2, type.identifier)
        var ids: Set<UUID> = []
        var from = Int64.max
        var to = Int64.min
        while try statement.step() {
            guard let id = statement.blob(0).flatMap(UUID.init(bytes:)) else { continue }
            ids.insert(id)
            from = min(from, statement.int64(1))
            to = max(to, statement.int64(2))
        }
        guard !ids.isEmpty else { return nil }
        return (ids, Instant(milliseconds: from), Instant(milliseconds: to))
    }

    // MARK: - Deletion and changes

    /// Deletes object `id` when it is a correlation (with its members) or a workout (keeping its samples) that
    /// `caller` may delete; returns how many objects went, or `nil` when `id` names no object.
    func deleteObject(_ id: UUID, _ caller: Caller) throws -> Int? {
        guard let header = try storedObjectHeader(id) else { return nil }
        if case .app(let app) = caller, header.writer != app { return 0 }
        var deleted = 0
        if let type = HealthTypeCatalog.type(header.type), type.kind == .correlation {
            for (member, _) in try memberKeys(of: id) where try deleteSample(member, caller) { deleted += 1 }
        }
        let members = try connection.cached("DELETE FROM object_members WHERE object_uuid = ?1")
        try members.bind(1, id.bytes)
        try members.step()
        let object = try connection.cached("DELETE FROM objects WHERE uuid = ?1")
        try object.bind(1, id.bytes)
        try object.step()
        try tombstone(uuid: id.bytes, typeID: header.typeID, writer: caller.description, replacedBy: nil)
        return deleted + 1
    }

    /// Before sample `id` is deleted: when it is a correlation's member, deletes that correlation (with every
    /// member) and returns the count; otherwise ends its workout associations and returns `nil`.
    func deleteMemberships(of id: UUID, _ caller: Caller) throws -> Int? {
        if let correlation = try correlationOwning(id) { return try deleteObject(correlation, caller) }
        let statement = try connection.cached("DELETE FROM object_members WHERE sample_uuid = ?1")
        try statement.bind(1, id.bytes)
        try statement.step()
        return nil
    }

    /// Deletes one member sample (a row, or a chunked sample); whether it was there.
    private func deleteSample(_ id: UUID, _ caller: Caller) throws -> Bool {
        let lookup = try connection.cached("SELECT type_id FROM samples WHERE uuid = ?1")
        try lookup.bind(1, id.bytes)
        if try lookup.step() {
            try remove(uuid: id.bytes, typeID: lookup.int64(0), writer: caller.description, replacedBy: nil)
            return true
        }
        return try deleteSeriesSample(id, writer: caller.description)
    }

    /// New correlations or workouts of `type` after `anchor`, with the tombstones of deleted ones.
    func objectChanges(of type: HealthType, typeID: Int64, since anchor: Int64, limit asked: Int, as caller: Caller)
        throws -> ChangeSet
    {
        let limit = ObjectChanges.rowLimit(of: type, asked: asked)
        // Workouts: all with a read grant, else the caller's own. Correlations: those the caller may see
        // (``isVisible(_:_:_:)``); deletions of others' only with read grants on every type the correlation
        // type accepts.
        let readAll = try type.kind == .workout ? canRead(caller, type) : canReadEveryMember(of: type, caller)
        let ownObjects = type.kind == .workout && !readAll
        let own = ownObjects ? " AND o.writer = ?3" : ""
        let added = try connection.prepare(
            "SELECT \(Self.objectColumns) WHERE o.type_id = ?1 AND o.seq > ?2\(own) ORDER BY o.seq LIMIT \(limit + 1)")
        try added.bind(1, typeID)
        try added.bind(2, anchor)
        if ownObjects { try added.bind(3, caller.description) }
        var objects: [StoredObject] = []
        while try added.step() { if let object = readObject(added, type: type) { objects.append(object) } }
        let tombstones = try connection.prepare(
            "SELECT seq, uuid FROM tombstones WHERE type_id = ?1 AND seq > ?2\(readAll ? "" : " AND writer = ?3") "
                + "ORDER BY seq LIMIT \(limit + 1)")
        try tombstones.bind(1, typeID)
        try tombstones.bind(2, anchor)
        if !readAll { try tombstones.bind(3, caller.description) }
        var deleted: [(seq: Int64, id: UUID)] = []
        while try tombstones.step() {
            if let id = tombstones.blob(1).flatMap(UUID.init(bytes:)) { deleted.append((tombstones.int64(0), id)) }
        }
        let window = ObjectChanges(of: type, objects: objects, deleted: deleted, since: anchor, limit: limit)
        var visible = CorrelationVisibility()
        let shown = try window.objects.filter { object in
            try type.kind == .workout || isVisible(object, caller, &visible)
        }
        try log(caller, .changes, type: type.identifier, count: window.events, denied: false)
        var changes = ChangeSet(added: [], deleted: window.deleted, anchor: window.anchor, hasMore: window.hasMore)
        if type.kind == .workout {
            changes.workouts = StoredObject.workouts(
                shown, for: caller, routesReadable: try canRead(caller, .workoutRoute))
        } else {
            changes.correlations = try shown.map { $0.correlation(try members(of: $0, caller)) }
        }
        return changes
    }

    // MARK: - Rows

    /// A page of the objects of `query.type` matching the query's time, source, device, subject and metadata
    /// filters, the cursor and the limit, of those `include` keeps (`ownOnly`: only the caller's own).
    private func objects(
        _ query: SampleQuery, caller: Caller, ownOnly: Bool, include: (StoredObject) throws -> Bool
    ) throws -> (objects: [StoredObject], next: SampleCursor?) {
        guard let typeID = try existingTypeID(query.type.identifier) else { return ([], nil) }
        var matched = ObjectPage(limit: query.limit)
        var cursor = query.cursor
        let rows = ObjectPage.rowsPerRead(query.type)
        while !matched.isFull {
            var conditions = SQLConditions()
            conditions.add("o.type_id = ?", [.integer(typeID)])
            if let to = query.to { conditions.add("o.start_ms <= ?", [.integer(to.milliseconds)]) }
            if let from = query.from { conditions.add("o.end_ms >= ?", [.integer(from.milliseconds)]) }
            conditions.add("so.identifier", in: query.sources)
            conditions.add("d.key", in: query.devices)
            conditions.add("sj.name", in: query.subjects)
            if ownOnly { conditions.add("o.writer = ?", [.text(caller.description)]) }
            if let cursor {
                conditions.add(
                    "(o.start_ms, o.end_ms, o.uuid) \(query.ascending ? ">" : "<") (?, ?, ?)",
                    [
                        .integer(cursor.start.milliseconds), .integer(cursor.end.milliseconds),
                        .blob(Self.uuidBytes(cursor.id)),
                    ])
            }
            let order = query.ascending ? "ASC" : "DESC"
            let statement = try conditions.prepare(
                "SELECT \(Self.objectColumns) WHERE \(conditions.sql) "
                    + "ORDER BY o.start_ms \(order), o.end_ms \(order), o.uuid \(order) LIMIT \(rows)",
                on: connection)
            // Row by row, so that no more bodies are read than the page takes.
            var stepped = 0
            var last: StoredObject?
            while !matched.isFull, try statement.step() {
                stepped += 1
                guard let object = readObject(statement, type: query.type) else { continue }
                last = object
                guard query.matchesTime(start: object.start, end: object.end), query.matchesMetadata(object.metadata),
                    try include(object)
                else { continue }
                matched.add(object)
            }
            guard !matched.isFull, let last, stepped == rows else { break }
            cursor = last.cursor
        }
        return (matched.objects, matched.next)
    }

    private func storedObjectHeader(_ id: UUID) throws -> (
        type: String, typeID: Int64, start: Int64, end: Int64, subject: String?, writer: String, body: String?,
        metadata: String?
    )? {
        let statement = try connection.cached(
            """
            SELECT t.identifier, o.type_id, o.start_ms, o.end_ms, sj.name, o.writer, o.body, o.metadata
            FROM objects o JOIN types t ON t.id = o.type_id LEFT JOIN subjects sj ON sj.id = o.subject_id
            WHERE o.uuid = ?1
            """)
        try statement.bind(1, id.bytes)
        guard try statement.step() else { return nil }
        return (
            statement.text(0) ?? "", statement.int64(1), statement.int64(2), statement.int64(3), statement.text(4),
            statement.text(5) ?? "", statement.text(6), statement.text(7)
        )
    }

    private func memberKeys(of object: UUID) throws -> [(id: UUID, type: String)] {
        let statement = try connection.cached(
            "SELECT sample_uuid, type FROM object_members WHERE object_uuid = ?1 ORDER BY type, sample_uuid")
        try statement.bind(1, object.bytes)
        var keys: [(UUID, String)] = []
        while try statement.step() {
            if let id = statement.blob(0).flatMap(UUID.init(bytes:)) { keys.append((id, statement.text(1) ?? "")) }
        }
        return keys
    }

    /// The correlation that sample `id` belongs to, if any.
    private func correlationOwning(_ id: UUID) throws -> UUID? {
        let statement = try connection.cached(
            """
            SELECT m.object_uuid, t.identifier FROM object_members m JOIN objects o ON o.uuid = m.object_uuid
            JOIN types t ON t.id = o.type_id WHERE m.sample_uuid = ?1
            """)
        try statement.bind(1, id.bytes)
        while try statement.step() {
            if HealthTypeCatalog.type(statement.text(1) ?? "")?.kind == .correlation {
                return statement.blob(0).flatMap(UUID.init(bytes:))
            }
        }
        return nil
    }

    private func insertObject(
        id: UUID, type: HealthType, start: Instant, end: Instant, offset: Int32, source: Source, device: Device?,
        subject: String?, metadata: [String: MetadataValue], body: String?, writer: String
    ) throws {
        let statement = try connection.cached(
            """
            INSERT INTO objects (uuid, type_id, start_ms, end_ms, start_offset_s, source_id, device_id, subject_id,
                writer, seq, metadata, body)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            """)
        try statement.bind(1, id.bytes)
        try statement.bind(2, try typeID(type.identifier))
        try statement.bind(3, start.milliseconds)
        try statement.bind(4, end.milliseconds)
        try statement.bind(5, Int64(offset))
        try statement.bind(6, try sourceID(source))
        try statement.bind(7, try deviceID(device))
        try statement.bind(8, try subjectID(subject))
        try statement.bind(9, writer)
        try statement.bind(10, try nextSequence())
        try statement.bind(11, MetadataCoding.encode(metadata))
        try statement.bind(12, body)
        try statement.step()
    }

    /// Records `sample` as a member of `object`; whether it was new.
    @discardableResult
    private func insertMember(of object: UUID, _ sample: QuantitySample) throws -> Bool {
        let statement = try connection.cached(
            """
            INSERT INTO object_members (object_uuid, sample_uuid, type, start_ms, end_ms) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT DO NOTHING
            """)
        try statement.bind(1, object.bytes)
        try statement.bind(2, sample.id.bytes)
        try statement.bind(3, sample.type.identifier)
        try statement.bind(4, sample.start.milliseconds)
        try statement.bind(5, sample.end.milliseconds)
        try statement.step()
        return connection.changes > 0
    }
}
