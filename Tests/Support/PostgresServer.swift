public import Foundation
import Glibc
internal import Support
import Synchronization

/// A throwaway PostgreSQL server for tests and benchmarks: `initdb` in a temporary folder, started with
/// `pg_ctl` listening on a Unix socket in that folder only (`listen_addresses = ''`), trust authentication,
/// stopped (SIGQUIT: an immediate shutdown) and removed by ``stop()`` or, at the latest, when the process exits.
///
/// PostgreSQL refuses to run as root, so as root (CI) the server runs as the `postgres` system user that Debian's
/// `postgresql` package creates, through `setpriv`; otherwise as the current user. The binaries are Debian's
/// (`/usr/lib/postgresql/<major>/bin`, the newest installed), or those in `$WEARHOUSE_PG_BIN`.
public final class PostgresServer: Sendable {
    /// The folder holding the data directory (`data`), the socket and the log (`log`).
    public let directory: URL
    private let binaries: String
    private let runAs: String?
    public let port: Int

    /// The libpq connection string of `database` on this server, as the superuser `wearhouse`.
    public func conninfo(database: String = "postgres") -> String {
        "host=\(directory.path) port=\(port) user=wearhouse dbname=\(database)"
    }

    /// The same as a `postgresql://` URL (the socket folder percent-encoded in the query).
    public func url(database: String) -> String {
        let host = directory.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? directory.path
        return "postgresql://wearhouse@/\(database)?host=\(host)&port=\(port)"
    }

    private init(directory: URL, binaries: String, runAs: String?, port: Int) {
        self.directory = directory
        self.binaries = binaries
        self.runAs = runAs
        self.port = port
    }

    /// A new server, initialised and running. `durable: false` (tests) turns fsync off.
    public static func start(durable: Bool = false) throws -> PostgresServer {
        guard let binaries = installedBinaries() else {
            throw ServerError(message: "PostgreSQL is not installed (Debian's postgresql package; make deps)")
        }
        let runAs: String? = geteuid() == 0 ? "postgres" : nil
        // Short: the socket path (folder + "/.s.PGSQL.5432") must fit in sockaddr_un's 108 bytes.
        let directory = URL(fileURLWithPath: "/tmp/wearhouse-pg-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let runAs {
            guard let user = getpwnam(runAs) else {
                throw ServerError(message: "no '\(runAs)' user to run PostgreSQL as (install postgresql)")
            }
            guard chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                throw ServerError(message: "cannot give \(directory.path) to \(runAs): errno \(errno)")
            }
        }
        let server = PostgresServer(directory: directory, binaries: binaries, runAs: runAs, port: 5432)
        let data = directory.appendingPathComponent("data").path
        try server.run(
            "initdb", ["-D", data, "-U", "wearhouse", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"])
        var settings = [
            "listen_addresses = ''", "unix_socket_directories = '\(directory.path)'", "port = \(server.port)",
            // One server serves every test of the process, and the suites run in parallel, each store with its
            // connections (60 ran out in CI on a loaded machine: "too many clients already").
            "max_connections = 250", "shared_buffers = 64MB",
        ]
        if !durable { settings += ["fsync = off", "full_page_writes = off", "synchronous_commit = off"] }
        let configuration = directory.appendingPathComponent("data/postgresql.conf")
        let handle = try FileHandle(forWritingTo: configuration)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(("\n" + settings.joined(separator: "\n") + "\n").utf8))
        try handle.close()
        running.withLock { $0.append(data) }
        try server.startServer()
        return server
    }

    /// A server shared by every test of the process, started on first use and stopped when the process exits.
    public static func shared() throws -> PostgresServer {
        try sharedServer.withLock { server in
            if let server { return server }
            let started = try start()
            server = started
            return started
        }
    }

    /// Creates an empty database and returns its connection string.
    public func createDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try psql("CREATE DATABASE \(name)")
        return conninfo(database: name)
    }

    /// Runs SQL through `psql` on `database`; returns what it printed (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        let result = try runTool("/usr/bin/psql", [conninfo(database: database), "-X", "-q", "-A", "-t", "-c", sql])
        guard result.status == 0 else { throw ServerError(message: "psql failed: \(result.stderr)") }
        return result.stdout
    }

    /// Starts the server (again) and waits until it accepts connections.
    public func startServer() throws {
        let data = directory.appendingPathComponent("data").path
        let log = directory.appendingPathComponent("log").path
        try run("pg_ctl", ["start", "-w", "-t", "60", "-D", data, "-l", log])
    }

    /// Stops the server: `fast` disconnects clients and shuts down cleanly, else an immediate shutdown (a crash).
    public func stopServer(fast: Bool = true) throws {
        let data = directory.appendingPathComponent("data").path
        try run("pg_ctl", ["stop", "-w", "-t", "60", "-D", data, "-m", fast ? "fast" : "immediate"])
    }

    /// Stops the server at once and removes its folder. Idempotent.
    public func stop() {
        let data = directory.appendingPathComponent("data").path
        running.withLock { $0.removeAll { $0 == data } }
        Self.quit(data)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Sends SIGQUIT (immediate shutdown) to the postmaster of `data`, without a process of our own: this runs at
    /// exit too. Root may signal the `postgres` user's process.
    fileprivate static func quit(_ data: String) {
        guard let text = try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first, let pid = Int32(line)
        else { return }
        kill(pid, SIGQUIT)
        for _ in 0..<200 where kill(pid, 0) == 0 { usleep(10_000) }
    }

    /// Runs a PostgreSQL tool to completion (as ``runAs`` when set), its output in `<tool>.out` in the folder.
    ///
    /// `ChildProcess` rather than `Process`: `pg_ctl start` leaves the server running with the descriptors it
    /// inherited, and `Process` did not notice pg_ctl's exit then. So the child inherits none but its standard
    /// ones: a server that kept the write end of a pipe another test had just made for a `wearhouse` child kept
    /// that test reading it forever.
    private func run(_ tool: String, _ arguments: [String]) throws {
        // env changes into the folder first: the postgres user may not be able to read our working directory.
        let executable = "/usr/bin/env"
        var argv = [executable, "--chdir=\(directory.path)"]
        if let runAs { argv += ["/usr/bin/setpriv", "--reuid=\(runAs)", "--regid=\(runAs)", "--init-groups", "--"] }
        argv += [binaries + "/" + tool] + arguments
        let output = directory.appendingPathComponent("\(tool).out").path
        let exit = try ChildProcess.start(
            executable, Array(argv.dropFirst()), output: .file(output, append: false), errors: .sameAsOutput
        ).wait()
        guard exit.succeeded else {
            let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            throw ServerError(message: "\(tool) \(arguments.first ?? "") failed (\(exit)): \(said)\(log)")
        }
    }

    private static func installedBinaries() -> String? {
        if let configured = ProcessInfo.processInfo.environment["WEARHOUSE_PG_BIN"] { return configured }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init)
        for version in versions.sorted(by: >) {
            let bin = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: bin + "/initdb") { return bin }
        }
        return nil
    }
}

/// Why the throwaway server could not be set up.
public struct ServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The data directories of servers still running, stopped when the process exits.
private let running: Mutex<[String]> = {
    atexit {
        for data in running.withLock({ $0 }) { PostgresServer.quit(data) }
        for data in running.withLock({ $0 }) {
            try? FileManager.default.removeItem(atPath: (data as NSString).deletingLastPathComponent)
        }
    }
    return Mutex([])
}()

private let sharedServer = Mutex<PostgresServer?>(nil)
