/// A failed PostgreSQL call: what kind of failure, the server's SQLSTATE when it sent one, its message, and the SQL
/// text. Parameter values are never part of the error (they are health data).
public struct PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// libpq is not installed (or too old).
        case libraryMissing
        /// No connection: the server is down, restarting, unreachable, or refused us.
        case connection
        /// The server rejected a statement (the SQLSTATE says why).
        case statement
        /// The store's schema is newer than this wearhouse, or not a wearhouse store.
        case schema
        /// The server answered something the engine did not expect.
        case unexpected
    }

    public var code: Code
    /// The five-character SQLSTATE, e.g. `23505` (unique violation), `57P01` (the server shuts down).
    public var sqlState: String?
    public var message: String
    public var sql: String?

    public init(code: Code, sqlState: String? = nil, message: String, sql: String? = nil) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
    }

    /// Whether the connection is gone or unusable, so that the call may succeed on a new one: no connection,
    /// SQLSTATE class 08 (connection exception), or 57P01-57P03 (the server shuts down or is starting).
    public var isConnectionFailure: Bool {
        if code == .connection { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    public var description: String {
        "PostgreSQL: " + message + (sqlState.map { " (SQLSTATE \($0))" } ?? "") + (sql.map { " in: \($0)" } ?? "")
    }
}
