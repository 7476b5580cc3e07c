import Foundation
import Health
public import StoreEngine

/// What `wearhouse store check` shows.
public struct StoreReport: Hashable, Sendable {
    /// `["ok"]` or SQLite's list of problems.
    public var integrity: [String]
    /// The database file plus its WAL.
    public var bytes: Int64
    public var schemaVersion: Int
    /// Stored samples per type identifier.
    public var counts: [String: Int]
    public var tombstones: Int
}

extension SQLiteHealthStore {
    /// Integrity check, sample counts per type and the size on disk.
    public func report() throws -> StoreReport {
        defer { connection.resetCachedStatements() }
        let integrity = try integrityCheck()
        let statement = try connection.cached(
            "SELECT t.identifier, count(*) FROM samples s JOIN types t ON t.id = s.type_id GROUP BY t.identifier ORDER BY 1"
        )
        var counts: [String: Int] = [:]
        while try statement.step() { counts[statement.text(0) ?? ""] = Int(statement.int64(1)) }
        let series = try connection.cached(
            "SELECT t.identifier, sum(c.count) FROM series_chunks c JOIN types t ON t.id = c.type_id GROUP BY t.identifier"
        )
        while try series.step() { counts[series.text(0) ?? "", default: 0] += Int(series.int64(1)) }
        let heartbeats = try connection.scalarInt("SELECT count(*) FROM heartbeat_series") ?? 0
        if heartbeats > 0 { counts[HealthType.heartbeatSeries.identifier, default: 0] += Int(heartbeats) }
        let size = [path, path + "-wal"].compactMap {
            (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? NSNumber
        }.reduce(Int64(0)) { $0 + $1.int64Value }
        return StoreReport(
            integrity: integrity, bytes: size, schemaVersion: Int(try connection.scalarInt("PRAGMA user_version") ?? 0),
            counts: counts, tombstones: Int(try connection.scalarInt("SELECT count(*) FROM tombstones") ?? 0))
    }
}

extension SQLiteHealthStore: HealthStoreEngine {
    public nonisolated var location: String { path }

    public func summary() async throws -> StoreSummary {
        let report = try report()
        return StoreSummary(
            integrity: report.integrity, bytes: report.bytes, schemaVersion: report.schemaVersion,
            counts: report.counts, tombstones: report.tombstones)
    }
}
