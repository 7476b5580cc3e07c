internal import Foundation
public import Health
internal import PostgresStore
internal import SQLiteStore
public import StoreEngine

/// Why a store could not be opened, in classes the callers map to their own answers (the command line to
/// sysexits codes, `doctor` to findings).
public struct StoreOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// The URL itself is wrong (a usage error).
        case badURL
        /// There is no store there, and the caller asked for one that exists.
        case missing
        /// The store is there but its data or schema is not one this wearhouse reads.
        case badData
        /// The server cannot be reached, or libpq is not installed.
        case unavailable
        /// The file cannot be opened or created.
        case io
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// Opens the store `url` names, with the engine that holds it: a SQLite file, or a PostgreSQL database (whose
/// schema is created or brought up to date). Reading commands pass `mustExist` so that a mistyped path does not
/// create an empty SQLite store. `now` is the store's clock (tests pass their own).
///
/// ```swift
/// let store = try openStore(try StoreURL(parsing: "/var/lib/wearhouse/health.db"), mustExist: true)
/// print(try await store.summary().counts)
/// ```
public func openStore(
    _ url: StoreURL, mustExist: Bool = false, now: @escaping @Sendable () -> Instant = { Instant.now }
) throws(StoreOpenError) -> any HealthStoreEngine {
    switch url {
    case .postgresql(let connection):
        guard PostgresLibrary.version != nil else {
            throw StoreOpenError(
                .unavailable, "the store \(url) is PostgreSQL, but libpq is not installed (apt-get install libpq5)")
        }
        do {
            return try PostgresHealthStore(url: connection, now: now)
        } catch let error as PostgresError where error.code == .schema {
            throw StoreOpenError(.badData, "the store at \(url): \(error)")
        } catch {
            throw StoreOpenError(.unavailable, "cannot open the store at \(url): \(error)")
        }
    case .sqlite(let path):
        if mustExist, !FileManager.default.fileExists(atPath: path) {
            throw StoreOpenError(.missing, "no store at \(path)")
        }
        do {
            return try SQLiteHealthStore(path: path, now: now)
        } catch {
            throw StoreOpenError(.io, "cannot open the store at \(path): \(error)")
        }
    }
}
