internal import CLibPQ

/// The PostgreSQL engine (the fleet issue) will live in this module. For now it reports the libpq it links.
public enum PostgresLibrary {
    /// The libpq version the process runs with, e.g. `15.18`.
    public static var version: String {
        let version = Int(PQlibVersion())
        return "\(version / 10000).\(version % 10000)"
    }
}
