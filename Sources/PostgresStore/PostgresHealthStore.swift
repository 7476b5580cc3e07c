import Dispatch
import Foundation
public import Health
internal import StoreEngine

/// The fleet engine: one PostgreSQL database that many gateways write and many people read at once.
///
/// It keeps the SQLite engine's semantics exactly (`docs/store-semantics.md`: idempotent natural-key writes and their
/// outcomes, externalUUID versions, tombstones and change anchors, grants and the access log, statistics through
/// `Health`'s merge, 15-minute rollups), so that both engines give the same answers for the same samples.
///
/// - Every call runs on the store's own serial executor (libpq blocks), never on the cooperative pool.
/// - Write transactions take one advisory lock first, so writers (gateways in other processes included) are
///   serialized: write-order numbers then only ever become visible in order, which is what change anchors need.
/// - Statements are prepared once per connection; batches of quantity samples are COPYed (binary) straight into
///   `samples` under a savepoint, and when one of their rows is stored already, through a temporary staging table
///   and one `INSERT ... SELECT ... ON CONFLICT DO NOTHING` (BENCHMARKS.md, "postgres" and "postgres-import").
/// - When the server goes away the call fails with ``PostgresError`` (``PostgresError/isConnectionFailure``);
///   the next call connects again, after a backoff while the server stays unreachable. The gateway's writer keeps
///   and retries failed batches, and since writes are idempotent, a batch whose commit was lost with the
///   connection is reported as duplicates the second time, never stored twice.
public actor PostgresHealthStore: HealthStore {
    private let executor: StoreExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The connection string or URL (may hold a password: never logged).
    private nonisolated let conninfo: String
    var link: PostgresLink
    private var connection: PostgresConnection?
    /// Wall clock for the access log and tombstones; injected by tests.
    let now: @Sendable () -> Instant

    // Id caches for the small dimension tables (cleared when a write transaction rolls back).
    var typeIDs: [String: Int64] = [:]
    var sourceIDs: [Source: Int64] = [:]
    /// Each source's ids, one per version it wrote at (``sourceVersionIDs(_:_:)``); read again in every write
    /// transaction, since another gateway may have added a version.
    var sourceVersions: [Int64: [Int64]] = [:]
    var deviceIDs: [String: Int64] = [:]
    var subjectIDs: [String: Int64] = [:]
    /// The longest sample span stored per type id, as far as this process knows.
    var typeSpans: [Int64: Int64] = [:]
    var metadataCache: [[String: MetadataValue]: String?] = [:]
    /// The write-order counter while a write transaction runs.
    var pendingSequence: Int64?
    /// The connection of the running write transaction, which a nested ``writeTransaction(_:)`` joins.
    var transactionConnection: PostgresConnection?
    /// Rollup changes of the running write transaction (see PostgresHealthStore+Rollups.swift).
    var pendingRollups: [RollupKey: RollupValue] = [:]
    var staleRollups: Set<RollupKey> = []
    /// Whether the staging table holds an earlier batch of the running transaction (``saveAll(as:_:)``): its rows
    /// go only at the commit (`ON COMMIT DELETE ROWS`), so the next batch empties it first.
    var stagingFilled = false
    /// Whether the next batch is COPYed straight into `samples` rather than through the staging table: off after a
    /// batch that met a stored row, on again after one that met none.
    var optimisticCopy = true
    /// Whether such a COPY runs under a savepoint, rolled back when it meets a stored row (in ``saveAll(as:_:)``,
    /// whose batches cannot be asked for again); otherwise that aborts the transaction, which
    /// ``writeTransaction(_:)`` runs again (a gateway's batch: one transaction, no subtransaction).
    var copiesUnderSavepoints = false
    /// Cumulative rollup changes of the running write transaction (PostgresHealthStore+CumulativeRollups.swift).
    var cumulativeChanges = CumulativeRollupChanges()
    /// How many quarter hours cumulative statistics took from the rollups, and how many they swept, since the
    /// store opened (what the tests and benchmarks check the rollups against).
    package internal(set) var cumulativeQuarters = (fromRollups: 0, swept: 0)
    /// How many rows one statement of ``sampleColumns(_:as:)`` reads: a part, logged as one read
    /// (``defaultColumnsFetch``; tests set fewer).
    var columnsFetch = defaultColumnsFetch

    /// How batches of quantity samples reach the staging table (both measured in BENCHMARKS.md).
    public enum BulkMethod: String, Sendable {
        /// `COPY staging FROM STDIN` (the default: about twice as fast for large batches).
        case copy
        /// One prepared `INSERT INTO staging SELECT * FROM unnest($1, $2, ...)` with array parameters.
        case arrays
    }

    public private(set) var bulkMethod = BulkMethod.copy

    public func setBulkMethod(_ method: BulkMethod) {
        bulkMethod = method
    }

    /// Connects to `url` (`postgresql://...` or a libpq connection string) and brings the schema up to date.
    ///
    /// - Throws: ``PostgresError`` when libpq is missing, the server cannot be reached, or the schema is newer
    ///   than this wearhouse.
    public init(url: String, now: @escaping @Sendable () -> Instant = { Instant.now }) throws {
        let connection = try PostgresConnection(url)
        try Self.prepareSession(connection)
        try Self.migrate(connection)
        conninfo = url
        self.connection = connection
        self.now = now
        link = PostgresLink()
        executor = StoreExecutor(label: "wearhouse.postgres")
    }

    /// Per-session settings. Commits are asynchronous by default (reads write the access log); every write
    /// transaction turns synchronous commit back on for itself (``writeTransaction(_:)``).
    private static func prepareSession(_ connection: PostgresConnection) throws(PostgresError) {
        try connection.run("SET synchronous_commit = off; SET client_min_messages = warning")
        try connection.run(
            """
            CREATE TEMPORARY TABLE IF NOT EXISTS staging (
                type_id integer NOT NULL, start_ms bigint NOT NULL, end_ms bigint NOT NULL,
                source_id integer NOT NULL, device_id integer NOT NULL, subject_id integer NOT NULL, uuid uuid NOT NULL,
                start_offset_s integer NOT NULL, value double precision NOT NULL, writer text NOT NULL,
                seq bigint NOT NULL, metadata text) ON COMMIT DELETE ROWS
            """)
    }

    static func migrate(_ connection: PostgresConnection) throws(PostgresError) {
        // A store whose schema is current opens without DDL or locks, so that a role that may only SELECT (a
        // dashboard's, a reader's) opens it. Outside a transaction, a failed probe (no such table yet) leaves the
        // session usable for the migration below.
        if let rows = try? connection.query("SELECT version FROM wearhouse_schema"), rows.count == 1,
            rows.int64(0, 0) == Int64(PostgresSchema.currentVersion)
        {
            return
        }
        try connection.query("SELECT pg_advisory_lock($1)", ["\(PostgresSchema.migrationLock)"])
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", ["\(PostgresSchema.migrationLock)"]) }
        try connection.run("CREATE TABLE IF NOT EXISTS wearhouse_schema (version integer NOT NULL)")
        let rows = try connection.query("SELECT version FROM wearhouse_schema")
        let version: Int
        if rows.count == 0 {
            try connection.query("INSERT INTO wearhouse_schema (version) VALUES (0)")
            version = 0
        } else {
            version = Int(rows.int64(0, 0))
        }
        guard version <= PostgresSchema.currentVersion else {
            throw PostgresError(
                code: .schema,
                message: "the store has schema version \(version), newer than this wearhouse understands "
                    + "(\(PostgresSchema.currentVersion)); upgrade wearhouse")
        }
        for (index, migration) in PostgresSchema.migrations.enumerated() where index >= version {
            try connection.run("BEGIN")
            do {
                try connection.run(migration)
                try PostgresSchema.finish(migrationTo: index + 1, on: connection)
                try connection.query("UPDATE wearhouse_schema SET version = $1", ["\(index + 1)"])
                try connection.run("COMMIT")
            } catch {
                _ = try? connection.run("ROLLBACK")
                throw error
            }
        }
    }

    /// The URL or connection string without its password, for messages and `wearhouse store check`.
    public nonisolated var redactedURL: String { Self.redacted(conninfo) }

    /// `url` with any password replaced by `***` (``StoreURL/redacted(_:)``).
    public static func redacted(_ url: String) -> String { StoreURL.redacted(url) }

    /// The size of the database on the server, in bytes.
    public func databaseSize() throws -> Int64 {
        try withConnection { try $0.query("SELECT pg_database_size(current_database())").int64(0, 0) }
    }

    /// The schema version of the database.
    public func schemaVersion() throws -> Int {
        try withConnection { Int(try $0.query("SELECT version FROM wearhouse_schema").int64(0, 0)) }
    }

    // MARK: - The connection

    /// Runs `body` on the connection, connecting first when there is none (``PostgresLink`` decides whether to
    /// try now). When the connection turns out lost, it is dropped, so that the next call connects afresh.
    @discardableResult
    func withConnection<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        let connection = try connected()
        do {
            return try body(connection)
        } catch let error as PostgresError where error.isConnectionFailure || connection.isBroken {
            self.connection = nil
            link.lost()
            throw error
        } catch {
            if connection.isBroken {
                self.connection = nil
                link.lost()
            }
            throw error
        }
    }

    private func connected() throws -> PostgresConnection {
        if let connection { return connection }
        let clock = ContinuousClock()
        switch link.attempt(at: clock.now) {
        case .wait(let until):
            throw PostgresError(
                code: .connection,
                message: "the server is unreachable; next attempt in \(until - clock.now) (\(link.lastFailure ?? ""))")
        case .connect:
            do {
                let connection = try PostgresConnection(conninfo)
                try Self.prepareSession(connection)
                self.connection = connection
                link.connected()
                return connection
            } catch {
                link.failed(at: clock.now, reason: error.message)
                throw error
            }
        }
    }

    /// A transaction. A write transaction first takes the write lock (``PostgresSchema/writeLock``) and turns
    /// synchronous commit on, then reads the write-order counter and keeps it in memory until it stores it back
    /// before committing, after the rollups. When anything throws, it rolls back, and so do the id caches.
    ///
    /// Inside a running write transaction (``saveAll(as:_:)``), `body` joins it: the outer one commits or rolls
    /// back.
    ///
    /// A batch COPYed straight into `samples` that meets a stored row (``StoredRowMet``) aborts the transaction:
    /// it is rolled back and `body` runs once more, its batches through the staging table.
    @discardableResult
    func writeTransaction<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        if let open = transactionConnection { return try body(open) }
        do {
            return try transaction(body)
        } catch is StoredRowMet {
            optimisticCopy = false
            return try transaction(body)
        }
    }

    /// A batch COPYed straight into `samples` met a row stored already (a unique index refused it), which aborted
    /// the transaction (``writeTransaction(_:)`` runs it again).
    struct StoredRowMet: Error {}

    private func transaction<Result>(_ body: (PostgresConnection) throws -> Result) throws -> Result {
        try withConnection { connection in
            transactionConnection = connection
            defer {
                transactionConnection = nil
                stagingFilled = false
            }
            try connection.run("BEGIN")
            do {
                try connection.query(
                    "SELECT pg_advisory_xact_lock($1), set_config('synchronous_commit', 'on', true)",
                    ["\(PostgresSchema.writeLock)"])
                pendingSequence = try connection.query("SELECT value FROM counters WHERE name = 'seq'").int64(0, 0)
                sourceVersions.removeAll(keepingCapacity: true)
                defer { pendingSequence = nil }
                let result = try body(connection)
                try flushRollups(connection)
                try connection.query("UPDATE counters SET value = $1 WHERE name = 'seq'", ["\(pendingSequence ?? 0)"])
                try connection.run("COMMIT")
                return result
            } catch {
                if !connection.isBroken { _ = try? connection.run("ROLLBACK") }
                typeIDs.removeAll()
                sourceIDs.removeAll()
                deviceIDs.removeAll()
                subjectIDs.removeAll()
                typeSpans.removeAll()
                pendingRollups.removeAll()
                staleRollups.removeAll()
                cumulativeChanges.removeAll()
                throw error
            }
        }
    }

    /// The next write-order number (shared by inserts and tombstones); only inside ``writeTransaction(_:)``.
    func nextSequence() -> Int64 {
        let next = (pendingSequence ?? 0) + 1
        pendingSequence = next
        return next
    }

    /// Reserves `count` write-order numbers and returns the first.
    func reserveSequence(_ count: Int) -> Int64 {
        let first = (pendingSequence ?? 0) + 1
        pendingSequence = first + Int64(count) - 1
        return first
    }

    // MARK: - Ids of the dimension tables

    func typeID(_ connection: PostgresConnection, _ identifier: String) throws -> Int64 {
        if let id = typeIDs[identifier] { return id }
        let id = try upsertID(
            connection, select: "SELECT id FROM types WHERE identifier = $1",
            insert: "INSERT INTO types (identifier) VALUES ($1) RETURNING id", [identifier])
        // The unit that samples_v shows (a type the store first sees after migration 3 has none yet).
        if let unit = HealthTypeCatalog.type(identifier)?.canonicalUnit {
            try connection.query("UPDATE types SET unit = $2 WHERE id = $1 AND unit IS NULL", ["\(id)", unit])
        }
        typeIDs[identifier] = id
        return id
    }

    /// The id of an existing type, without creating one.
    func existingTypeID(_ connection: PostgresConnection, _ identifier: String) throws -> Int64? {
        if let id = typeIDs[identifier] { return id }
        let rows = try connection.query("SELECT id FROM types WHERE identifier = $1", [identifier])
        guard rows.count > 0 else { return nil }
        typeIDs[identifier] = rows.int64(0, 0)
        return rows.int64(0, 0)
    }

    func sourceID(_ connection: PostgresConnection, _ source: Source) throws -> Int64 {
        if let id = sourceIDs[source] { return id }
        let id = try upsertID(
            connection, select: "SELECT id FROM sources WHERE identifier = $1 AND version = $2",
            insert: "INSERT INTO sources (identifier, version) VALUES ($1, $2) RETURNING id",
            [source.identifier, source.version ?? ""])
        sourceIDs[source] = id
        sourceVersions.removeAll()  // the row may be a new version of a source
        return id
    }

    /// The ids of every version of the source `sourceID` is a version of, `sourceID` first (mostly it alone): a
    /// sample's natural key, its client id and a heartbeat series' key are the app's whatever its version
    /// (`docs/store-semantics.md`, item 21), so the writes look for them under each.
    func sourceVersionIDs(_ connection: PostgresConnection, _ sourceID: Int64) throws -> [Int64] {
        if let ids = sourceVersions[sourceID] { return ids }
        let rows = try connection.query(
            """
            SELECT id FROM sources
            WHERE identifier = (SELECT identifier FROM sources WHERE id = $1) AND id <> $1 ORDER BY id
            """, ["\(sourceID)"])
        let ids = [sourceID] + (0..<rows.count).map { rows.int64($0, 0) }
        sourceVersions[sourceID] = ids
        return ids
    }

    func deviceID(_ connection: PostgresConnection, _ device: Device?) throws -> Int64 {
        guard let device else { return 0 }
        let key = device.key
        if let id = deviceIDs[key] { return id }
        let id = try upsertID(
            connection, select: "SELECT id FROM devices WHERE key = $1",
            insert: """
                INSERT INTO devices (key, name, manufacturer, model, hardware, firmware, software, serial, local_id)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id
                """,
            [
                key, device.name, device.manufacturer, device.model, device.hardwareVersion, device.firmwareVersion,
                device.softwareVersion, device.serialNumber, device.localIdentifier,
            ])
        deviceIDs[key] = id
        return id
    }

    func subjectID(_ connection: PostgresConnection, _ subject: String?) throws -> Int64 {
        guard let subject else { return 0 }
        if let id = subjectIDs[subject] { return id }
        let id = try upsertID(
            connection, select: "SELECT id FROM subjects WHERE name = $1",
            insert: "INSERT INTO subjects (name) VALUES ($1) RETURNING id", [subject])
        subjectIDs[subject] = id
        return id
    }

    /// Writers hold the write lock, so nobody else inserts the same row between the two statements.
    private func upsertID(_ connection: PostgresConnection, select: String, insert: String, _ values: [String?])
        throws -> Int64
    {
        let parameterCount = select.components(separatedBy: "$").count - 1
        let found = try connection.query(select, Array(values.prefix(parameterCount)))
        if found.count > 0 { return found.int64(0, 0) }
        return try connection.query(insert, values).int64(0, 0)
    }

    /// Metadata as stored, remembered for the few distinct dictionaries a sensor writes over and over.
    func encodedMetadata(_ metadata: [String: MetadataValue]) -> String? {
        if metadata.isEmpty { return nil }
        if let cached = metadataCache[metadata] { return cached }
        let encoded = MetadataCoding.encode(metadata)
        if metadataCache.count > 256 { metadataCache.removeAll() }
        metadataCache[metadata] = encoded
        return encoded
    }

    /// Raises the known longest span of `typeID` to `span` (inside a write transaction).
    func noteSpan(_ connection: PostgresConnection, typeID: Int64, span: Int64) throws {
        if let known = typeSpans[typeID], known >= span { return }
        let rows = try connection.query(
            """
            INSERT INTO type_spans (type_id, span_ms) VALUES ($1, $2)
            ON CONFLICT (type_id) DO UPDATE SET span_ms = greatest(type_spans.span_ms, excluded.span_ms)
            RETURNING span_ms
            """, ["\(typeID)", "\(span)"])
        typeSpans[typeID] = rows.int64(0, 0)
    }

    /// The longest stored span of `typeID` (read fresh: other writers may have stored longer ones).
    func span(_ connection: PostgresConnection, typeID: Int64) throws -> Int64 {
        let rows = try connection.query("SELECT span_ms FROM type_spans WHERE type_id = $1", ["\(typeID)"])
        return rows.count > 0 ? rows.int64(0, 0) : 0
    }

    // MARK: - Permissions and the access log

    func canRead(_ connection: PostgresConnection, _ caller: Caller, _ type: HealthType) throws -> Bool {
        guard case .app(let app) = caller else { return true }
        return try grant(connection, app, type.identifier).read
    }

    func canShare(_ connection: PostgresConnection, _ caller: Caller, _ type: HealthType) throws -> Bool {
        guard case .app(let app) = caller else { return true }
        return try grant(connection, app, type.identifier).share
    }

    /// Refuses a save by `caller` of the first of `types` it may not share, and logs the refusal.
    func requireShare(_ caller: Caller, _ types: [HealthType]) throws {
        try withConnection { connection in
            for type in types where try !canShare(connection, caller, type) {
                try log(connection, caller, .save, type: type.identifier, count: 0, denied: true)
                throw NotAuthorizedError(caller: caller, type: type.identifier)
            }
        }
    }

    private func grant(_ connection: PostgresConnection, _ app: String, _ type: String) throws -> (
        read: Bool, share: Bool
    ) {
        let rows = try connection.query("SELECT read, share FROM grants WHERE app = $1 AND type = $2", [app, type])
        guard rows.count > 0 else { return (false, false) }
        return (rows.bool(0, 0), rows.bool(0, 1))
    }

    /// Appends to the access log: inside a write transaction, with it; otherwise on its own (asynchronous
    /// commit: a crash of the server may lose the last entries, never a sample).
    func log(
        _ connection: PostgresConnection, _ caller: Caller, _ operation: AccessLogEntry.Operation, type: String?,
        count: Int, denied: Bool
    ) throws {
        do {
            try connection.query(
                "INSERT INTO access_log (at_ms, caller, operation, type, count, denied) VALUES ($1, $2, $3, $4, $5, $6)",
                [
                    "\(now().milliseconds)", caller.description, operation.rawValue, type, "\(count)",
                    denied ? "true" : "false",
                ])
        } catch {
            // insufficient_privilege: a role that may only read (docs/sql.md) cannot log its own reads; an app's
            // calls, which the service serves as a role that may write, are always logged.
            guard caller == .owner, error.sqlState == "42501" else { throw error }
        }
    }

    public func setAuthorization(app: String, _ grants: [TypeAuthorization]) throws {
        try writeTransaction { connection in
            for grant in grants {
                try connection.query(
                    """
                    INSERT INTO grants (app, type, read, share) VALUES ($1, $2, $3, $4)
                    ON CONFLICT (app, type) DO UPDATE SET read = excluded.read, share = excluded.share
                    """, [app, grant.type, grant.read ? "true" : "false", grant.share ? "true" : "false"])
            }
            // The owner's decision answers every pending request of the app.
            try connection.query(
                "UPDATE authorization_requests SET pending = false WHERE app = $1 AND pending", [app])
            try log(
                connection, .owner, grants.contains { $0.read || $0.share } ? .grant : .revoke, type: nil, count: 0,
                denied: false)
        }
    }

    public func apps() throws -> [AppAuthorization] {
        try withConnection { connection in
            let rows = try connection.query("SELECT app, type, read, share FROM grants ORDER BY app, type")
            var byApp: [(String, [TypeAuthorization])] = []
            for row in 0..<rows.count {
                let app = rows.text(row, 0) ?? ""
                let grant = TypeAuthorization(
                    type: rows.text(row, 1) ?? "", read: rows.bool(row, 2), share: rows.bool(row, 3))
                if byApp.last?.0 == app { byApp[byApp.count - 1].1.append(grant) } else { byApp.append((app, [grant])) }
            }
            var apps = Dictionary(
                uniqueKeysWithValues: byApp.map { ($0.0, AppAuthorization(app: $0.0, grants: $0.1)) })
            let pending = try connection.query(
                "SELECT app, type, direction FROM authorization_requests WHERE pending ORDER BY app, type")
            for row in 0..<pending.count {
                let app = pending.text(row, 0) ?? ""
                let type = pending.text(row, 1) ?? ""
                var entry = apps[app] ?? AppAuthorization(app: app, grants: [])
                if pending.text(row, 2) == "read" {
                    entry.pendingRead.append(type)
                } else {
                    entry.pendingShare.append(type)
                }
                apps[app] = entry
            }
            return apps.values.sorted { $0.app < $1.app }
        }
    }

    public func accessLog(limit: Int) throws -> [AccessLogEntry] {
        try withConnection { connection in
            let rows = try connection.query(
                "SELECT at_ms, caller, operation, type, count, denied FROM access_log ORDER BY id DESC LIMIT $1",
                ["\(max(0, limit))"])
            return (0..<rows.count).map { row in
                let caller = rows.text(row, 1) ?? "owner"
                return AccessLogEntry(
                    at: Instant(milliseconds: rows.int64(row, 0)), caller: caller == "owner" ? .owner : .app(caller),
                    operation: AccessLogEntry.Operation(rawValue: rows.text(row, 2) ?? "") ?? .query,
                    type: rows.text(row, 3), sampleCount: Int(rows.int64(row, 4)), denied: rows.bool(row, 5))
            }
        }
    }

    public func setPriority(of type: HealthType?, _ priority: SourcePriority?) throws {
        if let reason = priority?.invalidityReason { throw InvalidSampleError(index: 0, reason: reason) }
        let key = type?.identifier ?? defaultPriorityKey
        try writeTransaction { connection in
            try connection.query("DELETE FROM priorities WHERE type = $1", [key])
            try connection.query("DELETE FROM priority_policies WHERE type = $1", [key])
            guard let priority else { return }
            try connection.query(
                "INSERT INTO priority_policies (type, unranked) VALUES ($1, $2)", [key, priority.unranked.rawValue])
            for (position, provenance) in priority.order.enumerated() {
                try connection.query(
                    "INSERT INTO priorities (type, position, source, device) VALUES ($1, $2, $3, $4)",
                    [key, "\(position)", provenance.source, provenance.device])
            }
        }
    }

    public func priorities() throws -> [String: SourcePriority] {
        try withConnection { try priorities($0) }
    }

    func priorities(_ connection: PostgresConnection) throws -> [String: SourcePriority] {
        var stored: [String: SourcePriority] = [:]
        let policies = try connection.query("SELECT type, unranked FROM priority_policies")
        for row in 0..<policies.count {
            stored[policies.text(row, 0) ?? ""] = SourcePriority(
                order: [], unranked: CumulativeMerge.UnrankedPolicy(rawValue: policies.text(row, 1) ?? "") ?? .gapFill)
        }
        let entries = try connection.query("SELECT type, source, device FROM priorities ORDER BY type, position")
        for row in 0..<entries.count {
            stored[entries.text(row, 0) ?? "", default: .none].order.append(
                Provenance(source: entries.text(row, 1) ?? "", device: entries.text(row, 2)))
        }
        return stored
    }

    /// The priority the merge of `type` uses: the type's own, else the default, else none.
    func priority(_ connection: PostgresConnection, of type: HealthType) throws -> SourcePriority {
        let stored = try priorities(connection)
        return stored[type.identifier] ?? stored[defaultPriorityKey] ?? .none
    }
}
