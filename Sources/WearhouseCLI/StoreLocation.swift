import Foundation
import Gateway
import Health
import SQLiteStore
import StoreEngine
import Stores
import Support

/// Where the store is: `--store PATH`, `sqlite:PATH` or `postgresql://...` (any libpq URL: host, port, user,
/// password, `sslmode`, `host=/run/postgresql` for peer authentication), else `$WEARHOUSE_STORE`, else the
/// per-user default `$XDG_DATA_HOME/wearhouse/health.db` (`~/.local/share/wearhouse/health.db`) when it exists,
/// else the system service's store (`[store] url` of `/etc/wearhouse/wearhouse.conf`, or of `$WEARHOUSE_CONFIG`)
/// when that file exists, else the per-user default (created by the commands that write).
enum StoreLocation {
    struct Failure: Error {
        var message: String
        var code: ExitCode
    }

    /// The store URL `--store` gives (`store`), else `$WEARHOUSE_STORE`, else the default (``resolved(_:)``).
    static func url(_ store: String?) -> String {
        resolved(store).url
    }

    /// The store URL, and why it is that one: `--store`, `$WEARHOUSE_STORE`, the per-user store, or the system
    /// configuration's (its path in `origin`).
    static func resolved(_ store: String?) -> (url: String, origin: String) {
        let environment = ProcessInfo.processInfo.environment
        if let store { return (store, "--store") }
        if let store = environment["WEARHOUSE_STORE"], !store.isEmpty { return (store, "$WEARHOUSE_STORE") }
        let user = defaultPath(environment)
        let files = FileManager.default
        if files.fileExists(atPath: user) { return (user, "the per-user store") }
        let config =
            environment["WEARHOUSE_CONFIG"].flatMap { $0.isEmpty ? nil : $0 } ?? GatewayConfiguration.defaultPath
        guard files.fileExists(atPath: config) else { return (user, "the per-user store, not created yet") }
        // A configuration the user may not read (mode 0640, group wearhouse) names the service's default store.
        let url = (try? GatewayConfiguration.load(path: config))?.store.url ?? GatewayConfiguration.defaultStoreURL
        return (url, "[store] url of \(config), since \(user) does not exist")
    }

    /// The line `--help` adds for a command that takes `--store`: which store it would use now, and why.
    static func helpNote() -> String {
        let (url, origin) = resolved(nil)
        let shown = (try? StoreURL(parsing: url))?.description ?? url
        return "\nSTORE: without --store, this command uses \(shown) (\(origin)).\n"
    }

    /// Why a SQLite store at `path` cannot be opened when the cause is the file's (or a folder's) permissions:
    /// `permission denied: PATH (add yourself to the wearhouse group)` when group wearhouse may read it.
    static func permissionProblem(_ path: String) -> String? {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var folders: [String] = []
        var folder = (absolute as NSString).deletingLastPathComponent
        while folder != "/" && !folder.isEmpty {
            folders.insert(folder, at: 0)
            folder = (folder as NSString).deletingLastPathComponent
        }
        for candidate in folders + [absolute] {
            guard FileManager.default.fileExists(atPath: candidate) else { return nil }
            let mode = candidate == absolute ? R_OK : X_OK
            guard access(candidate, mode) != 0, errno == EACCES else { continue }
            let group = (try? FileManager.default.attributesOfItem(atPath: candidate))?[.groupOwnerAccountName]
            let hint = (group as? String) == "wearhouse" ? " (add yourself to the wearhouse group)" : ""
            return "permission denied: \(candidate)\(hint)"
        }
        return nil
    }

    /// The store `--store` (`store`) and the environment name, parsed.
    static func parsed(_ store: String?) throws(Failure) -> StoreURL {
        do {
            return try StoreURL(parsing: url(store))
        } catch {
            throw Failure(message: "--store: \(error)", code: .usage)
        }
    }

    static func defaultPath(_ environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/wearhouse/health.db" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/wearhouse/health.db"
    }

    /// Opens the store that `--store` (`store`; `nil`: `$WEARHOUSE_STORE`, else the default) names, with
    /// ``openStore(_:mustExist:now:)``. Reading commands pass `mustExist` so that a typo does not create an empty
    /// SQLite store.
    static func open(store: String?, mustExist: Bool) throws(Failure) -> any HealthStoreEngine {
        let url = try parsed(store)
        if case .sqlite(let path) = url, let problem = permissionProblem(path) {
            throw Failure(message: problem, code: .noPermission)
        }
        do throws(StoreOpenError) {
            let store = try openStore(url, mustExist: mustExist)
            if let problem = (store as? SQLiteHealthStore)?.accessLogProblem {
                FileHandle.standardError.write(Data("warning: \(problem); the owner's reads are not logged\n".utf8))
            }
            return store
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

/// What the store commands share: their usage failure, and how they print instants.
enum StoreArguments {
    struct Invalid: Error { var message: String }

    /// ISO 8601 with the sample's own offset, e.g. `2025-03-30T10:00:00.000+02:00` (``RFC3339Time/text(_:offsetSeconds:)``).
    static func format(_ instant: Instant, offsetSeconds: Int32) -> String {
        RFC3339Time.text(instant, offsetSeconds: offsetSeconds)
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
