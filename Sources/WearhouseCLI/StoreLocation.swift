import Foundation
import Health
import StoreEngine
import Stores

/// Where the store is: `--store PATH`, `sqlite:PATH` or `postgresql://...` (any libpq URL: host, port, user,
/// password, `sslmode`, `host=/run/postgresql` for peer authentication), else `$WEARHOUSE_STORE`, else the
/// per-user default `$XDG_DATA_HOME/wearhouse/health.db` (`~/.local/share/wearhouse/health.db`).
enum StoreLocation {
    static let option = (
        name: "store", value: "url",
        help:
            "The store: a path, sqlite:PATH or postgresql://... (default: $WEARHOUSE_STORE, else ~/.local/share/wearhouse/health.db)."
    )

    struct Failure: Error {
        var message: String
        var code: ExitCode
    }

    /// The store URL the arguments and environment name: `--store`, else `$WEARHOUSE_STORE`, else the default path.
    static func url(_ arguments: Arguments) -> String {
        let environment = ProcessInfo.processInfo.environment
        return arguments.option("store") ?? environment["WEARHOUSE_STORE"] ?? defaultPath(environment)
    }

    /// The store the arguments and environment name, parsed.
    static func parsed(_ arguments: Arguments) throws(Failure) -> StoreURL {
        do {
            return try StoreURL(parsing: url(arguments))
        } catch {
            throw Failure(message: "--store: \(error)", code: .usage)
        }
    }

    /// The SQLite path the arguments and environment name.
    static func path(_ arguments: Arguments) throws(Failure) -> String {
        let url = try parsed(arguments)
        guard case .sqlite(let path) = url else {
            throw Failure(message: "\(url) is a PostgreSQL store, not a file", code: .usage)
        }
        return path
    }

    static func defaultPath(_ environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/wearhouse/health.db" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/wearhouse/health.db"
    }

    /// Opens the store (``openStore(_:mustExist:now:)``). Reading commands pass `mustExist` so that a typo does not
    /// create an empty SQLite store.
    static func open(_ arguments: Arguments, mustExist: Bool) throws(Failure) -> any HealthStoreEngine {
        let url = try parsed(arguments)
        do throws(StoreOpenError) {
            return try openStore(url, mustExist: mustExist)
        } catch {
            switch error.kind {
            case .badURL: throw Failure(message: error.description, code: .usage)
            case .missing:
                throw Failure(message: "\(error.description) (give --store or set WEARHOUSE_STORE)", code: .noInput)
            case .badData: throw Failure(message: error.description, code: .dataError)
            case .unavailable: throw Failure(message: error.description, code: .unavailable)
            case .io: throw Failure(message: error.description, code: .ioError)
            }
        }
    }
}

/// Parsing of the options the store commands share.
enum StoreArguments {
    struct Invalid: Error { var message: String }

    static func type(_ arguments: Arguments) throws(Invalid) -> HealthType {
        guard let name = arguments.option("type") else {
            throw Invalid(message: "missing --type (see 'wearhouse types')")
        }
        guard let type = HealthTypeCatalog.type(name) else {
            throw Invalid(
                message:
                    "unknown type '\(name)'; known: \(HealthTypeCatalog.all.map(\.identifier).joined(separator: ", "))")
        }
        return type
    }

    static func timeZone(_ arguments: Arguments) throws(Invalid) -> TimeZone {
        let name = arguments.option("time-zone") ?? "UTC"
        guard let zone = TimeZone(identifier: name) else { throw Invalid(message: "unknown time zone '\(name)'") }
        return zone
    }

    /// `--from`/`--to`: an instant with an offset (`2025-03-30T08:00:00Z`), or local wall time in the time zone.
    static func instant(_ arguments: Arguments, _ name: String, zone: TimeZone) throws(Invalid) -> Instant? {
        guard let text = arguments.option(name) else { return nil }
        do {
            switch try StatisticsTime(parsing: text) {
            case .instant(let instant): return instant
            case .local(let local): return StatisticsBuckets.instant(for: local, in: zone)
            }
        } catch {
            throw Invalid(message: "--\(name): \(error)")
        }
    }

    static func list(_ arguments: Arguments, _ name: String) -> [String]? {
        arguments.option(name).map { $0.split(separator: ",").map { String($0).trimmingSpaces } }
    }

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
