internal import CLibPQ
internal import CSQLite

/// The store engines: SQLite (default) and PostgreSQL. Filled in by the store and fleet issues; for now the
/// module reports which C libraries it is linked against.
public enum StoreLibraries {
    /// The SQLite library version the process runs with, e.g. `3.40.1`.
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// The libpq version the process runs with, e.g. `15.18`.
    public static var libpqVersion: String {
        let version = Int(PQlibVersion())
        return "\(version / 10000).\(version % 10000)"
    }
}
