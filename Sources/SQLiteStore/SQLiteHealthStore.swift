import Foundation
public import Health
internal import StoreEngine

/// The default store engine: one SQLite file in WAL mode with durable commits.
///
/// Every call runs on the store's own serial executor (a dispatch queue), never on the cooperative pool.
/// Readers in other processes may read while this one writes (WAL). The file is created with mode 0600, or 0640
/// in a folder that its group may read and others may not (the service's `/var/lib/wearhouse`, mode 0750, group
/// `wearhouse`: the group's members read the store); an existing store whose files allow more than ``widestMode``
/// is made 0600 again when it opens. A user who may read the store but not write it (such a member) opens it
/// for reading, its side file too.
public actor SQLiteHealthStore: HealthStore {
    private let executor: StoreExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    let connection: SQLiteConnection
    /// The side file beside the store (`<path>-access`): the access log and the sensor statuses; `nil` when it
    /// cannot be opened (``accessLogProblem``).
    let sideConnection: SQLiteConnection?
    /// Whether this user may only read the side file (a member of the store's group): its reads go unlogged.
    let sideIsReadOnly: Bool
    /// Why the side file cannot be used (it is not a database, say), naming it; `nil` when it can. The store works
    /// without it: what needs the file (an app's logged call, the access log, sensor statuses) fails with this
    /// message, and the owner's reads go unlogged (the command line warns).
    public nonisolated let accessLogProblem: String?
    /// At most this many entries are kept in the side file's access log (the oldest go first).
    let accessLogCapacity: Int
    /// Entries this store logged into the side file since it opened (``trimAccessLog()`` runs every so many).
    var accessLogInserts = 0

    /// The default number of access-log entries the side file keeps (`docs/store-semantics.md`).
    public static let accessLogMaximumEntries = 1_000_000
    /// Access-log entries older than this many days go when the store is pruned (`docs/store-semantics.md`).
    public static let accessLogDays = 400

    /// The side file's connection, or the error that says why there is none.
    var accessLogConnection: SQLiteConnection {
        get throws(SQLiteError) {
            if let sideConnection { return sideConnection }
            throw SQLiteError(code: 26, operation: "open", message: accessLogProblem ?? "no access log")
        }
    }
    /// The database file.
    public nonisolated let path: String
    /// Wall clock for the access log and tombstones; injected by tests.
    let now: @Sendable () -> Instant

    // Id caches for the small dimension tables.
    var typeIDs: [String: Int64] = [:]
    var sourceIDs: [Source: Int64] = [:]
    var deviceIDs: [String: Int64] = [:]
    var subjectIDs: [String: Int64] = [:]
    /// Interned metadata dictionaries (heartbeat series), by their stored text.
    var metadataIDs: [String: Int64] = [:]
    /// The write-order counter while a write transaction runs (see ``writeTransaction(_:)``).
    var pendingSequence: Int64?
    var metadataCache: [[String: MetadataValue]: String?] = [:]
    /// Rollup changes of the running write transaction (see SQLiteHealthStore+Rollups.swift).
    var pendingRollups: [RollupKey: RollupValue] = [:]
    var staleRollups: Set<RollupKey> = []
    /// Day rollups to rebuild from their quarter hours (retention removed some of the day's quarter hours).
    var staleDayRollups: Set<RollupKey> = []
    /// Cumulative rollup changes of the running write transaction (see SQLiteHealthStore+CumulativeRollups.swift).
    var cumulativeChanges = CumulativeRollupChanges()
    /// How many quarter hours cumulative statistics took from the rollups, and how many they swept, since the
    /// store opened (what the tests and benchmarks check the rollups against).
    package internal(set) var cumulativeQuarters = (fromRollups: 0, swept: 0)

    /// How commits reach the disk.
    public enum Durability: String, Sendable {
        /// `synchronous=FULL`: every commit is on disk when it returns; a power cut loses nothing committed.
        /// The default: batched commits make it cost little (BENCHMARKS.md, "ingest").
        case full
        /// `synchronous=NORMAL`: commits survive a crash of the process but the last ones may be lost on a
        /// power cut, until the next checkpoint.
        case normal
    }

    /// Opens (creating when missing) the store at `path` and brings its schema up to date.
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened or migrated, with SQLite's message and the path.
    public init(
        path: String, durability: Durability = .full, now: @escaping @Sendable () -> Instant = { Instant.now },
        accessLogEntries: Int = SQLiteHealthStore.accessLogMaximumEntries
    ) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: path) {
            // Create it private before SQLite does (SQLite gives its -wal and -shm files the same mode).
            if !directory.isEmpty {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            guard
                FileManager.default.createFile(
                    atPath: path, contents: nil, attributes: [.posixPermissions: Self.creationMode(in: directory)])
            else {
                throw SQLiteError(code: 14, operation: "open", message: "cannot create \(path)")
            }
        }
        // A store made by an older wearhouse, or copied with another umask, may be readable by anyone: its files
        // are narrowed before SQLite opens them (the -wal and -shm files it creates take the store's mode).
        for file in Self.files(of: path) { Self.restrictMode(of: file) }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode = WAL")
        connection.keepWALFiles()
        // SQLite checkpoints the WAL every 1,000 pages and then writes it again from the start; without a limit the
        // file keeps the size of its largest transaction forever. With one, it is cut back after each checkpoint.
        try connection.execute("PRAGMA journal_size_limit = \(Self.walSizeLimit)")
        try connection.execute(durability == .full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        try Self.migrate(connection)
        let accessPath = path + "-access"
        if !FileManager.default.fileExists(atPath: accessPath) {
            _ = FileManager.default.createFile(
                atPath: accessPath, contents: nil, attributes: [.posixPermissions: Self.creationMode(in: directory)])
        }
        // A damaged side file must not take the store down with it: the store opens, and what needs the side
        // file says which file is at fault. A reader who may not write it (a member of the store's group) reads it.
        do {
            let readOnly = access(accessPath, W_OK) != 0 && access(accessPath, R_OK) == 0
            let side = try SQLiteConnection(path: accessPath, readOnly: readOnly)
            if !readOnly {
                try side.execute("PRAGMA journal_mode = WAL")
                side.keepWALFiles()
                try side.execute(SQLiteSchema.sideSchema)
            }
            sideConnection = side
            sideIsReadOnly = readOnly
            accessLogProblem = nil
        } catch {
            sideConnection = nil
            sideIsReadOnly = false
            accessLogProblem =
                "the access log \(accessPath) cannot be used (\(error.message)); the store itself is fine: move the "
                + "file away and it is made anew"
        }
        accessLogCapacity = max(accessLogEntries, 1)
        self.connection = connection
        self.path = path
        self.now = now
        executor = StoreExecutor(label: "wearhouse.sqlite")
    }

    /// The size the WAL file is cut back to after a checkpoint (`PRAGMA journal_size_limit`), bytes.
    public static let walSizeLimit = 8 << 20

    /// The most a store file's mode allows: the owner reads and writes, the group (the store directory's, the
    /// service's group `wearhouse` under the shipped unit) at most reads, others nothing.
    public static let widestMode = 0o640

    /// The mode of a new store file in `directory`: 0640 when the folder's group may read it and others may not
    /// (a deliberate group of readers), else 0600.
    static func creationMode(in directory: String) -> Int {
        let folder = directory.isEmpty ? "." : directory
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: folder),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
        else { return 0o600 }
        return mode & 0o050 == 0o050 && mode & 0o007 == 0 ? 0o640 : 0o600
    }

    /// The store's files: the database, its side file (the access log) and their WAL and shared-memory files.
    public nonisolated static func files(of path: String) -> [String] {
        [path, path + "-wal", path + "-shm", path + "-access", path + "-access-wal", path + "-access-shm"]
    }

    /// Makes `file` 0600 when its mode allows more than ``widestMode`` (a group that may read, deliberately given,
    /// is kept; a file others may read had no deliberate mode); leaves it alone when it is missing or belongs to
    /// another user (`wearhouse doctor` reports those).
    static func restrictMode(of file: String) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue,
            mode & 0o777 & ~widestMode & ~0o100 != 0
        else { return }
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }

    static func migrate(_ connection: SQLiteConnection) throws {
        let version = Int(try connection.scalarInt("PRAGMA user_version") ?? 0)
        guard version <= SQLiteSchema.currentVersion else {
            throw SQLiteError(
                code: 1, operation: "migrate",
                message: "the store has schema version \(version), newer than this wearhouse understands "
                    + "(\(SQLiteSchema.currentVersion)); upgrade wearhouse")
        }
        for index in SQLiteSchema.migrations.indices where index >= version {
            try applyMigration(index, on: connection)
        }
    }

    /// Takes the store from schema version `index` to `index + 1` in one write transaction, unless another
    /// connection did since this one read the version: the version is read again under the write lock. Two
    /// wearhouse processes opening a new store at once (`wearhouse run` and `wearhouse pair`, or two `pair`s, as in
    /// the BlueZ VM rig) both read version 0, and the second, once the first had committed, created the tables again
    /// and could not open the store ("table types already exists").
    static func applyMigration(_ index: Int, on connection: SQLiteConnection) throws {
        try connection.transaction {
            guard Int(try connection.scalarInt("PRAGMA user_version") ?? 0) == index else { return }
            try connection.execute(SQLiteSchema.migrations[index])
            try SQLiteSchema.finish(migrationTo: index + 1, on: connection)
            try connection.execute("PRAGMA user_version = \(index + 1)")
        }
    }

    /// Copies the WAL into the database file and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`).
    public func checkpoint() throws {
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// `PRAGMA integrity_check`: "ok" or SQLite's list of problems.
    public func integrityCheck() throws -> [String] {
        try connection.texts("PRAGMA integrity_check")
    }

    // MARK: - Ids of the dimension tables

    func typeID(_ identifier: String) throws -> Int64 {
        if let id = typeIDs[identifier] { return id }
        let id = try upsertID(
            select: "SELECT id FROM types WHERE identifier = ?1", insert: "INSERT INTO types (identifier) VALUES (?1)",
            [identifier])
        typeIDs[identifier] = id
        return id
    }

    /// Whether the stored type `typeID` is discrete (the types that have rollups).
    func isDiscrete(typeID: Int64) throws -> Bool {
        try aggregation(typeID: typeID) == .discrete
    }

    /// How the stored type `typeID` aggregates (`nil` for an identifier the catalog does not know).
    func aggregation(typeID: Int64) throws -> HealthType.Aggregation? {
        if let identifier = typeIDs.first(where: { $0.value == typeID })?.key {
            return HealthTypeCatalog.type(identifier)?.aggregation
        }
        let statement = try connection.cached("SELECT identifier FROM types WHERE id = ?1")
        try statement.bind(1, typeID)
        guard try statement.step(), let identifier = statement.text(0) else { return nil }
        typeIDs[identifier] = typeID
        return HealthTypeCatalog.type(identifier)?.aggregation
    }

    /// The id of an existing type, without creating one.
    func existingTypeID(_ identifier: String) throws -> Int64? {
        if let id = typeIDs[identifier] { return id }
        let statement = try connection.cached("SELECT id FROM types WHERE identifier = ?1")
        try statement.bind(1, identifier)
        guard try statement.step() else { return nil }
        let id = statement.int64(0)
        typeIDs[identifier] = id
        return id
    }

    func sourceID(_ source: Source) throws -> Int64 {
        if let id = sourceIDs[source] { return id }
        let id = try upsertID(
            select: "SELECT id FROM sources WHERE identifier = ?1 AND version = ?2",
            insert: "INSERT INTO sources (identifier, version) VALUES (?1, ?2)",
            [source.identifier, source.version ?? ""])
        sourceIDs[source] = id
        return id
    }

    func deviceID(_ device: Device?) throws -> Int64 {
        guard let device else { return 0 }
        let key = device.key
        if let id = deviceIDs[key] { return id }
        let id = try upsertID(
            select: "SELECT id FROM devices WHERE key = ?1",
            insert: """
                INSERT INTO devices (key, name, manufacturer, model, hardware, firmware, software, serial, local_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """,
            [
                key, device.name, device.manufacturer, device.model, device.hardwareVersion, device.firmwareVersion,
                device.softwareVersion, device.serialNumber, device.localIdentifier,
            ])
        deviceIDs[key] = id
        return id
    }

    func subjectID(_ subject: String?) throws -> Int64 {
        guard let subject else { return 0 }
        if let id = subjectIDs[subject] { return id }
        let id = try upsertID(
            select: "SELECT id FROM subjects WHERE name = ?1", insert: "INSERT INTO subjects (name) VALUES (?1)",
            [subject])
        subjectIDs[subject] = id
        return id
    }

    /// The id of an interned metadata dictionary, 0 for none.
    func metadataID(_ metadata: [String: MetadataValue]) throws -> Int64 {
        guard let text = encodedMetadata(metadata) else { return 0 }
        if let id = metadataIDs[text] { return id }
        let id = try upsertID(
            select: "SELECT id FROM metadata_sets WHERE text = ?1",
            insert: "INSERT INTO metadata_sets (text) VALUES (?1)",
            [text])
        if metadataIDs.count > 256 { metadataIDs.removeAll() }
        metadataIDs[text] = id
        return id
    }

    private func upsertID(select: String, insert: String, _ values: [String?]) throws -> Int64 {
        let query = try connection.cached(select)
        for (index, value) in values.prefix(select.components(separatedBy: "?").count - 1).enumerated() {
            try query.bind(Int32(index + 1), value)
        }
        if try query.step() { return query.int64(0) }
        let statement = try connection.cached(insert)
        for (index, value) in values.enumerated() { try statement.bind(Int32(index + 1), value) }
        try statement.step()
        return connection.lastInsertRowID
    }

    /// The next write-order number (shared by inserts and tombstones). Inside ``writeTransaction(_:)`` the
    /// counter is read once and kept in memory until the commit; the write lock keeps other processes out.
    func nextSequence() throws -> Int64 {
        if let current = pendingSequence {
            pendingSequence = current + 1
            return current + 1
        }
        try connection.execute("UPDATE counters SET value = value + 1 WHERE name = 'seq'")
        return try connection.scalarInt("SELECT value FROM counters WHERE name = 'seq'") ?? 0
    }

    /// The last write-order number handed out in the running write transaction; with
    /// ``reserveSequence(through:)``, a caller numbers many samples without a call per sample.
    func lastSequence() throws -> Int64 {
        guard let current = pendingSequence else {
            throw SQLiteError(code: 21, operation: "write", message: "sequence numbers outside a write transaction")
        }
        return current
    }

    /// Marks the numbers up to `last` as used (see ``lastSequence()``).
    func reserveSequence(through last: Int64) throws {
        pendingSequence = max(try lastSequence(), last)
    }

    /// A write transaction (`BEGIN IMMEDIATE`) with the sequence counter held in memory for its duration.
    ///
    /// When it throws, the transaction rolls back, and so do the id caches: a row it inserted into a dimension
    /// table (a new source, device, ...) is gone, and its cached id must not be used again.
    ///
    /// Inside a running write transaction (``saveAll(as:_:)``), `body` joins it: the outer one commits or rolls
    /// back.
    func writeTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        if pendingSequence != nil { return try body() }
        do {
            return try transactionKeepingSequence(body)
        } catch {
            typeIDs.removeAll()
            sourceIDs.removeAll()
            deviceIDs.removeAll()
            subjectIDs.removeAll()
            metadataIDs.removeAll()
            pendingRollups.removeAll()
            staleRollups.removeAll()
            staleDayRollups.removeAll()
            cumulativeChanges.removeAll()
            throw error
        }
    }

    private func transactionKeepingSequence<Result>(_ body: () throws -> Result) throws -> Result {
        try connection.transaction {
            pendingSequence = try connection.scalarInt("SELECT value FROM counters WHERE name = 'seq'") ?? 0
            defer { pendingSequence = nil }
            let result = try body()
            try flushRollups()
            let store = try connection.cached("UPDATE counters SET value = ?1 WHERE name = 'seq'")
            try store.bind(1, pendingSequence ?? 0)
            try store.step()
            return result
        }
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

    // MARK: - Permissions and the access log

    func canRead(_ caller: Caller, _ type: HealthType) throws -> Bool {
        guard case .app(let app) = caller else { return true }
        return try grant(app, type.identifier).read
    }

    func canShare(_ caller: Caller, _ type: HealthType) throws -> Bool {
        guard case .app(let app) = caller else { return true }
        return try grant(app, type.identifier).share
    }

    private func grant(_ app: String, _ type: String) throws -> (read: Bool, share: Bool) {
        let statement = try connection.cached("SELECT read, share FROM grants WHERE app = ?1 AND type = ?2")
        try statement.bind(1, app)
        try statement.bind(2, type)
        guard try statement.step() else { return (false, false) }
        return (statement.int64(0) != 0, statement.int64(1) != 0)
    }

    func log(_ caller: Caller, _ operation: AccessLogEntry.Operation, type: String?, count: Int, denied: Bool) throws {
        if pendingSequence != nil, !denied {
            // Inside a write transaction: the entry commits with the write, added to the caller's entry for this
            // operation and type in the current minute (migration 10).
            let at = now().milliseconds
            let statement = try connection.cached(
                """
                INSERT INTO write_log (minute_ms, caller, operation, type, at_ms, count, writes)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1)
                ON CONFLICT (minute_ms, caller, operation, type) DO UPDATE SET
                    at_ms = max(at_ms, excluded.at_ms), count = count + excluded.count, writes = writes + 1
                """)
            try statement.bind(1, at - (at % 60_000 + 60_000) % 60_000)
            try statement.bind(2, caller.description)
            try statement.bind(3, operation.rawValue)
            try statement.bind(4, type ?? "")
            try statement.bind(5, at)
            try statement.bind(6, Int64(count))
            try statement.step()
            return
        }
        guard let side = sideConnection, !sideIsReadOnly else {
            // The owner's own reads go unlogged while the side file is broken (the command line says so) or may
            // only be read (a member of the store's group, who cannot write the log); an app's call is refused,
            // naming the file.
            if case .owner = caller { return }
            _ = try accessLogConnection
            return
        }
        defer { side.resetCachedStatements() }
        side.resetCachedStatements()
        // The owner's own reads (the command line, the Health app: a page makes several) commit without an fsync,
        // as sensor statuses do: a power cut may lose the last few of them, never an app's entry, which stays
        // durable. Each fsync cost 5-15 ms on a loaded disk, several per page (BENCHMARKS.md, web).
        let insert = {
            let statement = try side.cached(
                "INSERT INTO access_log (at_ms, caller, operation, type, count, denied) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
            )
            try statement.bind(1, self.now().milliseconds)
            try statement.bind(2, caller.description)
            try statement.bind(3, operation.rawValue)
            try statement.bind(4, type)
            try statement.bind(5, Int64(count))
            try statement.bind(6, Int64(denied ? 1 : 0))
            try statement.step()
        }
        if caller == .owner { try side.withoutSync(insert) } else { try insert() }
        accessLogInserts += 1
        if accessLogInserts % max(accessLogCapacity / 100, 1) == 0 { try trimAccessLog() }
    }

    /// Keeps the side file's access log within ``accessLogCapacity`` entries, dropping the oldest (an app calling
    /// in a loop cannot grow the file without bound).
    func trimAccessLog() throws {
        guard let side = sideConnection else { return }
        defer { side.resetCachedStatements() }
        let trim = try side.cached(
            "DELETE FROM access_log WHERE id <= (SELECT max(id) FROM access_log) - ?1")
        try trim.bind(1, Int64(accessLogCapacity))
        try trim.step()
    }

    /// Drops the access-log entries (both files) from before `cutoff`, and keeps the side file within its
    /// capacity (``prune()``).
    func pruneAccessLog(before cutoff: Int64) throws {
        defer { connection.resetCachedStatements() }
        let writes = try connection.cached("DELETE FROM write_log WHERE minute_ms < ?1")
        try writes.bind(1, cutoff)
        try writes.step()
        guard let side = sideConnection else { return }
        defer { side.resetCachedStatements() }
        let old = try side.cached("DELETE FROM access_log WHERE at_ms < ?1")
        try old.bind(1, cutoff)
        try old.step()
        try trimAccessLog()
    }

    public func setAuthorization(app: String, _ grants: [TypeAuthorization]) throws {
        defer { connection.resetCachedStatements() }
        try connection.transaction {
            let statement = try connection.cached(
                "INSERT OR REPLACE INTO grants (app, type, read, share) VALUES (?1, ?2, ?3, ?4)")
            for grant in grants {
                statement.reset()
                try statement.bind(1, app)
                try statement.bind(2, grant.type)
                try statement.bind(3, Int64(grant.read ? 1 : 0))
                try statement.bind(4, Int64(grant.share ? 1 : 0))
                try statement.step()
            }
            // The owner's decision answers every pending request of the app.
            let decide = try connection.cached(
                "UPDATE authorization_requests SET pending = 0 WHERE app = ?1 AND pending = 1")
            try decide.bind(1, app)
            try decide.step()
            try log(
                .owner, grants.contains { $0.read || $0.share } ? .grant : .revoke, type: nil, count: 0, denied: false)
        }
    }

    public func apps() throws -> [AppAuthorization] {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached("SELECT app, type, read, share FROM grants ORDER BY app, type")
        var byApp: [(String, [TypeAuthorization])] = []
        while try statement.step() {
            let app = statement.text(0) ?? ""
            let grant = TypeAuthorization(
                type: statement.text(1) ?? "", read: statement.int64(2) != 0, share: statement.int64(3) != 0)
            if byApp.last?.0 == app { byApp[byApp.count - 1].1.append(grant) } else { byApp.append((app, [grant])) }
        }
        var apps = Dictionary(uniqueKeysWithValues: byApp.map { ($0.0, AppAuthorization(app: $0.0, grants: $0.1)) })
        let pending = try connection.cached(
            "SELECT app, type, direction FROM authorization_requests WHERE pending = 1 ORDER BY app, type")
        while try pending.step() {
            let app = pending.text(0) ?? ""
            let type = pending.text(1) ?? ""
            var entry = apps[app] ?? AppAuthorization(app: app, grants: [])
            if pending.text(2) == "read" { entry.pendingRead.append(type) } else { entry.pendingShare.append(type) }
            apps[app] = entry
        }
        return apps.values.sorted { $0.app < $1.app }
    }

    public func accessLog(limit: Int) throws -> [AccessLogEntry] {
        defer {
            sideConnection?.resetCachedStatements()
            connection.resetCachedStatements()
        }
        // Newest first from each file, merged by time (a write's entry lives in the store, the rest beside it).
        func read(_ statement: SQLiteStatement) throws -> [AccessLogEntry] {
            try statement.bind(1, Int64(limit))
            var entries: [AccessLogEntry] = []
            while try statement.step() {
                let callerText = statement.text(1) ?? "owner"
                entries.append(
                    AccessLogEntry(
                        at: Instant(milliseconds: statement.int64(0)),
                        caller: callerText == "owner" ? .owner : .app(callerText),
                        operation: AccessLogEntry.Operation(rawValue: statement.text(2) ?? "") ?? .query,
                        type: statement.text(3), sampleCount: Int(statement.int64(4)),
                        denied: statement.int64(5) != 0))
            }
            return entries
        }
        let side = try read(
            accessLogConnection.cached(
                "SELECT at_ms, caller, operation, type, count, denied FROM access_log ORDER BY id DESC LIMIT ?1"))
        let writes = try read(
            connection.cached(
                """
                SELECT at_ms, caller, operation, nullif(type, ''), count, 0 FROM write_log
                ORDER BY minute_ms DESC, at_ms DESC LIMIT ?1
                """))
        var merged: [AccessLogEntry] = []
        merged.reserveCapacity(min(limit, side.count + writes.count))
        var (i, j) = (0, 0)
        while merged.count < limit, i < side.count || j < writes.count {
            if j == writes.count || (i < side.count && side[i].at >= writes[j].at) {
                merged.append(side[i])
                i += 1
            } else {
                merged.append(writes[j])
                j += 1
            }
        }
        return merged
    }

    public func setPriority(of type: HealthType?, _ priority: SourcePriority?) throws {
        if let reason = priority?.invalidityReason { throw InvalidSampleError(index: 0, reason: reason) }
        let key = type?.identifier ?? defaultPriorityKey
        defer { connection.resetCachedStatements() }
        try connection.transaction {
            for table in ["priorities", "priority_policies"] {
                let clear = try connection.cached("DELETE FROM \(table) WHERE type = ?1")
                try clear.bind(1, key)
                try clear.step()
            }
            guard let priority else { return }
            let policy = try connection.cached("INSERT INTO priority_policies (type, unranked) VALUES (?1, ?2)")
            try policy.bind(1, key)
            try policy.bind(2, priority.unranked.rawValue)
            try policy.step()
            let insert = try connection.cached(
                "INSERT INTO priorities (type, position, source, device) VALUES (?1, ?2, ?3, ?4)")
            for (position, provenance) in priority.order.enumerated() {
                insert.reset()
                try insert.bind(1, key)
                try insert.bind(2, Int64(position))
                try insert.bind(3, provenance.source)
                try insert.bind(4, provenance.device)
                try insert.step()
            }
        }
    }

    public func priorities() throws -> [String: SourcePriority] {
        var stored: [String: SourcePriority] = [:]
        let policies = try connection.cached("SELECT type, unranked FROM priority_policies")
        while try policies.step() {
            stored[policies.text(0) ?? ""] = SourcePriority(
                order: [], unranked: CumulativeMerge.UnrankedPolicy(rawValue: policies.text(1) ?? "") ?? .gapFill)
        }
        let entries = try connection.cached("SELECT type, source, device FROM priorities ORDER BY type, position")
        while try entries.step() {
            stored[entries.text(0) ?? "", default: .none].order.append(
                Provenance(source: entries.text(1) ?? "", device: entries.text(2)))
        }
        return stored
    }

    /// The priority the merge of `type` uses: the type's own, else the default, else none.
    func priority(of type: HealthType) throws -> SourcePriority {
        let stored = try priorities()
        return stored[type.identifier] ?? stored[defaultPriorityKey] ?? .none
    }
}
