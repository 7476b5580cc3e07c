import Foundation
import Health
import PostgresStore
import SQLiteStore

/// Where the store is: `--store PATH`, `sqlite:PATH` or `postgresql://...` (any libpq URL: host, port, user,
/// password, `sslmode`, `host=/run/postgresql` for peer authentication), else `$WEARHOUSE_STORE`, else the
/// per-user default `$XDG_DATA_HOME/wearhouse/health.db` (`~/.local/share/wearhouse/health.db`).
enum StoreLocation {
    struct Failure: Error {
        var message: String
        var code: ExitCode
    }

    /// The store URL the arguments and environment name: `--store`, else `$WEARHOUSE_STORE`, else the default path.
    static func url(_ arguments: Arguments) -> String {
        let environment = ProcessInfo.processInfo.environment
        return arguments.option("store") ?? environment["WEARHOUSE_STORE"] ?? defaultPath(environment)
    }

    /// Whether `url` names a PostgreSQL database (`postgresql://...` or `postgres://...`).
    static func isPostgreSQL(_ url: String) -> Bool {
        url.hasPrefix("postgresql://") || url.hasPrefix("postgres://")
    }

    /// The SQLite path the arguments and environment name.
    static func path(_ arguments: Arguments) throws(Failure) -> String {
        let url = url(arguments)
        if isPostgreSQL(url) {
            throw Failure(
                message: "\(PostgresHealthStore.redacted(url)) is a PostgreSQL store, not a file", code: .usage)
        }
        let path = url.hasPrefix("sqlite:") ? String(url.dropFirst("sqlite:".count)) : url
        guard !path.isEmpty else { throw Failure(message: "empty store path", code: .usage) }
        return path
    }

    static func defaultPath(_ environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/wearhouse/health.db" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/wearhouse/health.db"
    }

    /// Opens the store: a SQLite file, or a PostgreSQL database (whose schema is created or brought up to date).
    /// Reading commands pass `mustExist` so that a typo does not create an empty SQLite store.
    static func open(_ arguments: Arguments, mustExist: Bool) throws(Failure) -> any CommandStore {
        let url = url(arguments)
        if isPostgreSQL(url) {
            do {
                return try PostgresHealthStore(url: url)
            } catch let error as PostgresError where error.code == .schema {
                throw Failure(message: "the store at \(PostgresHealthStore.redacted(url)): \(error)", code: .dataError)
            } catch {
                throw Failure(
                    message: "cannot open the store at \(PostgresHealthStore.redacted(url)): \(error)",
                    code: .unavailable)
            }
        }
        let path = try path(arguments)
        if mustExist, !FileManager.default.fileExists(atPath: path) {
            throw Failure(message: "no store at \(path) (give --store or set WEARHOUSE_STORE)", code: .noInput)
        }
        do {
            return try SQLiteHealthStore(path: path)
        } catch {
            throw Failure(message: "cannot open the store at \(path): \(error)", code: .ioError)
        }
    }
}

/// What the commands use of a store, whichever engine holds it.
protocol CommandStore: HealthStore, SensorRegistry {
    /// Where the store is, for people: the SQLite path, or the PostgreSQL URL without its password.
    nonisolated var location: String { get }
    func summary() async throws -> StoreSummary
    func retention() async throws -> [String: Int]
    func setRetention(of type: HealthType, days: Int?) async throws
    func prune() async throws -> Int
}

/// What `wearhouse store check` shows, for either engine.
struct StoreSummary {
    /// `["ok"]`, or the engine's list of problems.
    var integrity: [String]
    var bytes: Int64
    var schemaVersion: Int
    var counts: [String: Int]
    var tombstones: Int
}

extension SQLiteHealthStore: CommandStore {
    nonisolated var location: String { path }

    func summary() async throws -> StoreSummary {
        let report = try report()
        return StoreSummary(
            integrity: report.integrity, bytes: report.bytes, schemaVersion: report.schemaVersion,
            counts: report.counts,
            tombstones: report.tombstones)
    }
}

extension PostgresHealthStore: CommandStore {
    nonisolated var location: String { redactedURL }

    func summary() async throws -> StoreSummary {
        let (counts, tombstones) = try counts()
        return StoreSummary(
            integrity: ["ok"], bytes: try databaseSize(), schemaVersion: try schemaVersion(), counts: counts,
            tombstones: tombstones)
    }
}

/// What the store commands share: their usage failure, and how they print instants.
enum StoreArguments {
    struct Invalid: Error { var message: String }

    /// ISO 8601 with the sample's own offset, e.g. `2025-03-30T10:00:00.000+02:00`.
    static func format(_ instant: Instant, offsetSeconds: Int32) -> String {
        let local = Date(timeIntervalSince1970: Double(instant.milliseconds + Int64(offsetSeconds) * 1000) / 1000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS"
        let sign = offsetSeconds < 0 ? "-" : "+"
        let magnitude = abs(Int(offsetSeconds))
        let offset =
            offsetSeconds == 0 ? "Z" : String(format: "%@%02d:%02d", sign, magnitude / 3600, magnitude % 3600 / 60)
        return formatter.string(from: local) + offset
    }
}

/// Runs a store command's body and turns the errors it throws into a message and a sysexits code: usage
/// problems 64, bad data 65, a missing store 66, an unavailable engine 69, anything else from the store 74.
func runStoreCommand(_ console: Console, _ body: () async throws -> ExitCode) async -> ExitCode {
    do {
        return try await body()
    } catch let failure as StoreLocation.Failure {
        console.error(failure.message)
        return failure.code
    } catch let invalid as StoreArguments.Invalid {
        console.error(invalid.message)
        return .usage
    } catch let bucketError as StatisticsBucketError {
        console.error("\(bucketError)")
        return .usage
    } catch let invalid as InvalidSampleError {
        console.error("\(invalid)")
        return .dataError
    } catch {
        console.error("\(error)")
        return .ioError
    }
}
