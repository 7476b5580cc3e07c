internal import CSQLite

/// Facts about the SQLite library the process runs with.
public enum SQLiteLibrary {
    /// e.g. `3.40.1`.
    public static var version: String { String(cString: sqlite3_libversion()) }
}
