import Foundation

/// A plain SQLite database of samples, one row each, that sqlite3, Datasette or pandas read as they are: what
/// `wearhouse export --format sqlite` writes (docs/sqlite-export.md describes the tables). Unlike the store, it has
/// no chunks, no dimension ids and no side file: every value is in the row, text or a number.
///
/// ```swift
/// let file = try SQLiteExportFile(path: "health-export.db")
/// try file.insert(row)
/// try file.finish()
/// ```
public final class SQLiteExportFile {
    /// One sample's row in `samples`.
    public struct Sample: Sendable {
        public var uuid: String
        public var type: String
        /// ISO 8601 with the sample's own offset.
        public var start: String
        public var end: String
        public var startMilliseconds: Int64
        public var endMilliseconds: Int64
        public var offsetSeconds: Int32
        /// `nil` for a heartbeat series (its beats are in `heartbeats`).
        public var value: Double?
        public var unit: String
        public var source: String
        public var sourceVersion: String?
        public var device: String?
        public var deviceName: String?
        public var subject: String?
        /// A JSON object, or `nil` when the sample has none.
        public var metadata: String?

        public init(
            uuid: String, type: String, start: String, end: String, startMilliseconds: Int64, endMilliseconds: Int64,
            offsetSeconds: Int32, value: Double?, unit: String, source: String, sourceVersion: String?,
            device: String?, deviceName: String?, subject: String?, metadata: String?
        ) {
            self.uuid = uuid
            self.type = type
            self.start = start
            self.end = end
            self.startMilliseconds = startMilliseconds
            self.endMilliseconds = endMilliseconds
            self.offsetSeconds = offsetSeconds
            self.value = value
            self.unit = unit
            self.source = source
            self.sourceVersion = sourceVersion
            self.device = device
            self.deviceName = deviceName
            self.subject = subject
            self.metadata = metadata
        }
    }

    private let connection: SQLiteConnection
    private let temporary: String
    private let path: String

    /// The tables, as docs/sqlite-export.md describes them.
    static let schema = """
        CREATE TABLE types (
            identifier TEXT PRIMARY KEY,
            unit TEXT NOT NULL,
            aggregation TEXT NOT NULL
        );
        CREATE TABLE samples (
            uuid TEXT PRIMARY KEY,
            type TEXT NOT NULL REFERENCES types (identifier),
            start TEXT NOT NULL,
            "end" TEXT NOT NULL,
            start_epoch_ms INTEGER NOT NULL,
            end_epoch_ms INTEGER NOT NULL,
            utc_offset_seconds INTEGER NOT NULL,
            value REAL,
            unit TEXT NOT NULL,
            source TEXT NOT NULL,
            source_version TEXT,
            device TEXT,
            device_name TEXT,
            subject TEXT,
            metadata TEXT
        );
        CREATE INDEX samples_by_type_and_time ON samples (type, start_epoch_ms);
        CREATE TABLE heartbeats (
            series_uuid TEXT NOT NULL REFERENCES samples (uuid),
            time TEXT NOT NULL,
            epoch_ms REAL NOT NULL,
            rr_ms REAL NOT NULL,
            preceded_by_gap INTEGER NOT NULL
        );
        CREATE INDEX heartbeats_by_series ON heartbeats (series_uuid);
        """

    /// Starts a new export at `path` (written beside it and renamed over it by ``finish(types:)``; mode 0600:
    /// it is health data).
    public init(path: String) throws {
        self.path = path
        temporary = "\(path).\(getpid()).partial"
        try? FileManager.default.removeItem(atPath: temporary)
        guard FileManager.default.createFile(atPath: temporary, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw SQLiteError(code: 14, operation: "open", message: "cannot create \(temporary)")
        }
        connection = try SQLiteConnection(path: temporary)
        try connection.execute("PRAGMA journal_mode = OFF")
        try connection.execute("PRAGMA synchronous = OFF")
        try connection.execute(Self.schema)
        try connection.execute("BEGIN")
    }

    /// Adds one sample's row.
    public func insert(_ sample: Sample) throws {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached(
            """
            INSERT INTO samples (uuid, type, start, "end", start_epoch_ms, end_epoch_ms, utc_offset_seconds, value,
                unit, source, source_version, device, device_name, subject, metadata)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
            """)
        try statement.bind(1, sample.uuid)
        try statement.bind(2, sample.type)
        try statement.bind(3, sample.start)
        try statement.bind(4, sample.end)
        try statement.bind(5, sample.startMilliseconds)
        try statement.bind(6, sample.endMilliseconds)
        try statement.bind(7, Int64(sample.offsetSeconds))
        try statement.bind(8, sample.value)
        try statement.bind(9, sample.unit)
        try statement.bind(10, sample.source)
        try statement.bind(11, sample.sourceVersion)
        try statement.bind(12, sample.device)
        try statement.bind(13, sample.deviceName)
        try statement.bind(14, sample.subject)
        try statement.bind(15, sample.metadata)
        try statement.step()
    }

    /// Adds one beat of the heartbeat series `series` (a row of ``insert(_:)-(Sample)``).
    public func insertBeat(series: String, time: String, epochMilliseconds: Double, rr: Double, gap: Bool) throws {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached(
            "INSERT INTO heartbeats (series_uuid, time, epoch_ms, rr_ms, preceded_by_gap) VALUES (?1, ?2, ?3, ?4, ?5)")
        try statement.bind(1, series)
        try statement.bind(2, time)
        try statement.bind(3, epochMilliseconds)
        try statement.bind(4, rr)
        try statement.bind(5, Int64(gap ? 1 : 0))
        try statement.step()
    }

    /// Writes the `types` rows (identifier, unit, aggregation), commits, and puts the file at its path.
    public func finish(types: [(identifier: String, unit: String, aggregation: String)]) throws {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached(
            "INSERT INTO types (identifier, unit, aggregation) VALUES (?1, ?2, ?3)")
        for type in types {
            statement.reset()
            try statement.bind(1, type.identifier)
            try statement.bind(2, type.unit)
            try statement.bind(3, type.aggregation)
            try statement.step()
        }
        try connection.execute("COMMIT")
        guard rename(temporary, path) == 0 else {
            throw SQLiteError(
                code: 14, operation: "rename",
                message: "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
        }
    }
}
