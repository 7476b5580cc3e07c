internal import CSQLite

/// SQLite's transient destructor: bound text and blobs are copied before `sqlite3_bind_*` returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection (`sqlite3*`), closed in `deinit`.
///
/// Not thread-safe and deliberately not `Sendable`: a store engine confines each connection to one serial
/// executor (its own thread), never the cooperative pool.
package final class SQLiteConnection {
    private let handle: OpaquePointer
    let path: String
    /// Prepared statements by SQL text, reused by ``cached(_:)``.
    private var statementCache: [String: SQLiteStatement] = [:]

    /// Opens (creating if needed) the database at `path`, read-write or read-only; with `uri`, `path` is an SQLite
    /// URI (`file:...?immutable=1`).
    package init(path: String, readOnly: Bool = false, uri: Bool = false) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | (uri ? SQLITE_OPEN_URI : 0)
        let result = sqlite3_open_v2(path, &db, flags, nil)
        guard result == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            // A half-opened handle must be closed before throwing (sqlite3_open_v2 documentation).
            sqlite3_close_v2(db)
            throw SQLiteError(code: result, operation: "open", message: "\(message) (\(path))")
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Self.busyTimeoutMilliseconds)
    }

    /// Keeps the WAL file (and its index) when the last connection closes (SQLITE_FCNTL_PERSIST_WAL), so that
    /// users who may read the store but not write its folder can still open it after the writer stopped.
    func keepWALFiles() {
        var on: Int32 = 1
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    deinit {
        statementCache.removeAll()  // finalize every statement before the connection closes
        sqlite3_close_v2(handle)
    }

    /// A prepared statement for `sql`, compiled once per connection and reset for this use.
    func cached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// Rewinds every cached statement, so that none keeps a read snapshot open (which would hold back WAL
    /// checkpoints). Called after each store operation.
    func resetCachedStatements() {
        for statement in statementCache.values { statement.reset() }
    }

    /// Runs one or more statements without results.
    package func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if result != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), operation: "exec", message: message, sql: sql)
        }
    }

    /// Compiles `sql` into a statement.
    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard result == SQLITE_OK, let statement else {
            throw error("prepare", sql: sql)
        }
        return SQLiteStatement(statement: statement, connection: self, sql: sql)
    }

    /// The first column of the first row of `sql`, as an integer (`PRAGMA user_version`, counts).
    package func scalarInt(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// The first column of every row of `sql`, as text.
    package func texts(_ sql: String) throws(SQLiteError) -> [String] {
        let statement = try prepare(sql)
        var rows: [String] = []
        while try statement.step() { rows.append(statement.text(0) ?? "") }
        return rows
    }

    /// How many times ``transaction(_:)`` tries to take the write lock before it gives up (each try waits up to
    /// ``busyTimeoutMilliseconds`` for another connection's transaction to end).
    static let beginAttempts = 3
    /// How long a statement waits for another connection's lock (`sqlite3_busy_timeout`).
    static let busyTimeoutMilliseconds: Int32 = 5_000

    /// Runs `body` with `synchronous=NORMAL` (in WAL mode: its commits survive a crash of the process, and a power
    /// cut may lose the last of them), then restores the connection's own setting.
    func withoutSync<Result>(_ body: () throws -> Result) throws -> Result {
        let previous = try scalarInt("PRAGMA synchronous") ?? 2
        guard previous > 1 else { return try body() }
        try execute("PRAGMA synchronous = NORMAL")
        defer { try? execute("PRAGMA synchronous = \(previous)") }
        return try body()
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`, so a writer never fails late on a lock upgrade);
    /// commits when it returns, rolls back when it throws.
    ///
    /// Another connection's write never reaches the caller as `SQLITE_BUSY` while it lasts less than
    /// ``beginAttempts`` times the busy timeout: every cached statement is rewound first, so that no read snapshot
    /// of an earlier statement is upgraded (which fails at once with `SQLITE_BUSY_SNAPSHOT` when another
    /// connection committed since, without waiting), and a `BEGIN` that still finds the lock taken is tried again.
    /// `body` runs only once the write lock is held, so it is never run twice. Cached statements are rewound again
    /// before the commit, so that its automatic checkpoint can run.
    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        var attempt = 1
        while true {
            resetCachedStatements()
            do {
                // Prepared once, as is COMMIT, instead of parsed for every write (it showed in a small batch's profile).
                _ = try cached("BEGIN IMMEDIATE").step()
                break
            } catch {
                guard error.isBusy, attempt < Self.beginAttempts else { throw error }
                attempt += 1
            }
        }
        do {
            let result = try body()
            // No statement may still be reading when the commit ends: SQLite's automatic checkpoint, run by the
            // COMMIT once the WAL holds `wal_autocheckpoint` pages, gives up on a connection with an open read, and
            // a writer that commits again and again (the gateway's store writer, a replay) grew the WAL without
            // bound (36 MB beside an empty database file after the replay benchmark's saves).
            resetCachedStatements()
            _ = try cached("COMMIT").step()
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The rowid of the last successful INSERT.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    func error(_ operation: String, sql: String?) -> SQLiteError {
        SQLiteError(
            code: sqlite3_extended_errcode(handle), operation: operation,
            message: String(cString: sqlite3_errmsg(handle)),
            sql: sql)
    }

    /// The version of the SQLite library in use.
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}

@available(*, unavailable, message: "a connection belongs to one serial executor")
extension SQLiteConnection: Sendable {}

/// A prepared statement (`sqlite3_stmt*`), finalized in `deinit`. Bind, step, read columns, reset.
package final class SQLiteStatement {
    private let statement: OpaquePointer
    private let connection: SQLiteConnection
    let sql: String

    fileprivate init(statement: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.statement = statement
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Clears bindings and rewinds, ready for the next execution.
    package func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    /// Rewinds, keeping the bindings: the next execution may rebind some of them.
    func rewind() {
        sqlite3_reset(statement)
    }

    // Binding: parameters are 1-based, as in SQLite.

    package func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        try check(sqlite3_bind_int64(statement, index, value), "bind")
    }

    func bind(_ index: Int32, _ value: Double) throws(SQLiteError) {
        try check(sqlite3_bind_double(statement, index, value), "bind")
    }

    package func bind(_ index: Int32, _ value: String?) throws(SQLiteError) {
        guard let value else { return try bindNull(index) }
        try check(sqlite3_bind_text(statement, index, value, -1, transient), "bind")
    }

    func bind(_ index: Int32, _ value: [UInt8]?) throws(SQLiteError) {
        guard let value else { return try bindNull(index) }
        let result = value.withUnsafeBytes { buffer in
            sqlite3_bind_blob(statement, index, buffer.baseAddress, Int32(buffer.count), transient)
        }
        try check(result, "bind")
    }

    func bind(_ index: Int32, _ value: Int64?) throws(SQLiteError) {
        guard let value else { return try bindNull(index) }
        try bind(index, value)
    }

    func bind(_ index: Int32, _ value: Double?) throws(SQLiteError) {
        guard let value else { return try bindNull(index) }
        try bind(index, value)
    }

    func bindNull(_ index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(statement, index), "bind")
    }

    /// Runs to the next row: `true` when a row is available, `false` when done.
    @discardableResult
    package func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error("step", sql: sql)
        }
    }

    // Reading: columns are 0-based, as in SQLite.

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    package func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }
    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    package func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }

    func blob(_ column: Int32) -> [UInt8]? {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard let pointer = sqlite3_column_blob(statement, column) else { return isNull(column) ? nil : [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    private func check(_ result: Int32, _ operation: String) throws(SQLiteError) {
        guard result == SQLITE_OK else { throw connection.error(operation, sql: sql) }
    }
}

@available(*, unavailable, message: "a statement belongs to its connection's serial executor")
extension SQLiteStatement: Sendable {}
