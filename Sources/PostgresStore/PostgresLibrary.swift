internal import CLibPQ
internal import Glibc

/// libpq, opened at run time (`dlopen("libpq.so.5")`), never linked.
///
/// Linking libpq pulls in its TLS, Kerberos and LDAP libraries, which cost a service writing to SQLite about 5 MB
/// of resident memory for nothing (BENCHMARKS.md, scenario service). So the PostgreSQL engine calls libpq through
/// a table of function pointers, looked up with `dlsym` on first use; when libpq is missing, opening a
/// PostgreSQL store fails with ``PostgresError`` saying so, and nothing else changes.
public enum PostgresLibrary {
    /// The libpq version installed, e.g. `15.18`, or `nil` when libpq is not installed.
    public static var version: String? {
        guard case .success(let functions) = PQ.loaded else { return nil }
        let version = Int(functions.libVersion())
        return "\(version / 10000).\(version % 10000)"
    }
}

/// The libpq functions the engine calls: `CLibPQ`'s table (Sources/CLibPQ/shim.h), one field per function named
/// without its `PQ` prefix and typed from `libpq-fe.h`, so that `pq.exec(connection, sql)` is checked against
/// libpq's own declaration of `PQexec`. Plain C function pointers, set once when the library is loaded.
typealias PQ = WearhouseLibPQ

extension PQ {
    /// The library, loaded once per process; the failure says what is missing.
    static let loaded: Result<PQ, PostgresError> = load()

    static func load() -> Result<PQ, PostgresError> {
        guard let handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(
                PostgresError(
                    code: .libraryMissing,
                    message: "libpq (libpq.so.5) is not installed; install Debian's libpq5 package (\(reason))"))
        }
        // The handle stays open for the life of the process: the function pointers point into it.
        var missing = [UnsafePointer<CChar>?](repeating: nil, count: Int(WearhouseLibPQFunctionCount))
        let table = UnsafeMutablePointer<PQ>.allocate(capacity: 1)
        defer { table.deallocate() }
        let absent = Int(WearhouseLibPQLoad(handle, table, &missing))
        guard absent == 0 else {
            // The table is incomplete: it is never read, only freed (plain pointers need no deinitialization).
            let names = missing.prefix(absent).compactMap { $0.map { String(cString: $0) } }
            return .failure(
                PostgresError(
                    code: .libraryMissing,
                    message: "libpq.so.5 lacks \(names.joined(separator: ", ")); a newer libpq5 is needed"))
        }
        return .success(table.move())
    }

    /// `PG_DIAG_SQLSTATE`.
    static let fieldSQLState = WearhouseLibPQFieldSQLState
    /// `PG_DIAG_MESSAGE_PRIMARY`.
    static let fieldMessage = WearhouseLibPQFieldMessage
}
