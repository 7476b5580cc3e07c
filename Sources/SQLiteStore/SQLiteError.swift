/// A failed SQLite call: the result code, what we were doing, SQLite's message and the SQL text.
///
/// Bound values are never part of the error (they may be health data).
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, ...).
    public var code: Int32
    /// `open`, `prepare`, `step`, `bind`, `exec`, ...
    public var operation: String
    public var message: String
    public var sql: String?

    public init(code: Int32, operation: String, message: String, sql: String? = nil) {
        self.code = code
        self.operation = operation
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low byte of the extended code).
    public var primaryCode: Int32 { code & 0xFF }

    /// `SQLITE_BUSY` or `SQLITE_LOCKED`: another connection holds a lock.
    public var isBusy: Bool { primaryCode == 5 || primaryCode == 6 }
    /// `SQLITE_CONSTRAINT` and its extended codes.
    public var isConstraint: Bool { primaryCode == 19 }

    public var description: String {
        "SQLite \(operation) failed (\(code)): \(message)" + (sql.map { " in: \($0)" } ?? "")
    }
}
