internal import Glibc

/// The PostgreSQL engine (the fleet issue) will live in this module. Until then it only looks for libpq.
///
/// libpq is opened at run time (`dlopen`), not linked: it pulls in TLS, Kerberos and LDAP libraries that cost
/// a service writing to SQLite about 5 MB of resident memory for nothing (BENCHMARKS.md, scenario service).
public enum PostgresLibrary {
    /// The libpq version installed, e.g. `15.18`, or `nil` when libpq is not installed.
    public static var version: String? {
        guard let handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL) else { return nil }
        defer { dlclose(handle) }
        guard let symbol = dlsym(handle, "PQlibVersion") else { return nil }
        typealias LibraryVersion = @convention(c) () -> Int32
        let version = Int(unsafeBitCast(symbol, to: LibraryVersion.self)())
        return "\(version / 10000).\(version % 10000)"
    }
}
