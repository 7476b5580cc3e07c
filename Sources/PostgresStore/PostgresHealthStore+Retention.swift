import Foundation
public import Health
internal import StoreEngine

/// Retention, as in the SQLite engine: how many days of each type the store keeps; pruning deletes older samples,
/// series and rollups without tombstones (a storage policy of this store; apps keep what they synced).
extension PostgresHealthStore {
    /// Keeps `type` for `days` days (`nil`: forever).
    public func setRetention(of type: HealthType, days: Int?) throws {
        if let days {
            try RetentionLimits.check(days)
            try withConnection { connection in
                try connection.query(
                    "INSERT INTO retention (type, days) VALUES ($1, $2) ON CONFLICT (type) DO UPDATE SET days = $2",
                    [type.identifier, "\(days)"])
            }
        } else {
            try withConnection { try $0.query("DELETE FROM retention WHERE type = $1", [type.identifier]) }
        }
    }

    /// Every type with a retention period, in days.
    public func retention() throws -> [String: Int] {
        try withConnection { connection in
            let rows = try connection.query("SELECT type, days FROM retention")
            var result: [String: Int] = [:]
            for row in 0..<rows.count { result[rows.text(row, 0) ?? ""] = Int(rows.int64(row, 1)) }
            return result
        }
    }

    /// Access-log entries older than this many days go when the store is pruned (`docs/store-semantics.md`).
    public static let accessLogDays = 400
    /// At most this many access-log entries are kept after a prune, the newest (`docs/store-semantics.md`).
    public static let accessLogMaximumEntries = 1_000_000

    /// Deletes the samples that ended before their type's retention period; returns how many. Also drops
    /// access-log entries older than ``accessLogDays`` and keeps the newest ``accessLogMaximumEntries``.
    @discardableResult
    public func prune() throws -> Int {
        try prune(rehearse: false)
    }

    /// How many samples ``prune()`` would delete now (the same deletion, rolled back).
    public func pruneCount() throws -> Int {
        try prune(rehearse: true)
    }

    private func prune(rehearse: Bool) throws -> Int {
        let periods = try retention()
        if !rehearse {
            let logCutoff = now().milliseconds - Int64(Self.accessLogDays) * 86_400_000
            try withConnection { connection in
                try connection.query("DELETE FROM access_log WHERE at_ms < $1", ["\(logCutoff)"])
                try connection.query(
                    "DELETE FROM access_log WHERE id <= (SELECT max(id) FROM access_log) - $1",
                    ["\(Self.accessLogMaximumEntries)"])
            }
        }
        return try RehearsalRollback.run(rehearse: rehearse) { finish in try prune(periods, finish) }
    }

    private func prune(_ periods: [String: Int], _ finish: (Int) throws -> Int) throws -> Int {
        try writeTransaction { connection in
            var removed = 0
            for (identifier, days) in periods.sorted(by: { $0.key < $1.key }) {
                // A period beyond the limit (stored before there was one) keeps everything.
                guard RetentionLimits.days.contains(days), let typeID = try existingTypeID(connection, identifier)
                else { continue }
                let cutoff = now().milliseconds - Int64(days) * 86_400_000
                removed +=
                    try connection.query(
                        "DELETE FROM samples WHERE type_id = $1 AND end_ms < $2", ["\(typeID)", "\(cutoff)"]
                    ).affected
                if identifier == HealthType.heartbeatSeries.identifier {
                    removed +=
                        try connection.query("DELETE FROM heartbeat_series WHERE end_ms < $1", ["\(cutoff)"]).affected
                }
                let bucket = Rollup.bucket(cutoff)
                try connection.query(
                    "DELETE FROM rollups WHERE type_id = $1 AND bucket_ms < $2", ["\(typeID)", "\(bucket)"])
                // The quarter hour the cutoff falls in may have lost some samples: rebuild it.
                let partial = try connection.query(
                    "SELECT source_id, device_id, subject_id FROM rollups WHERE type_id = $1 AND bucket_ms = $2",
                    ["\(typeID)", "\(bucket)"])
                for row in 0..<partial.count {
                    staleRollups.insert(
                        RollupKey(
                            typeID: typeID, sourceID: partial.int64(row, 0), deviceID: partial.int64(row, 1),
                            subjectID: partial.int64(row, 2), bucket: bucket))
                }
                try pruneCumulativeRollups(connection, typeID: typeID, cutoff: cutoff)
            }
            return try finish(removed)
        }
    }

    /// Stored samples per type identifier (heartbeat series included) and the number of tombstones.
    public func counts() throws -> (samples: [String: Int], tombstones: Int) {
        try withConnection { connection in
            let rows = try connection.query(
                "SELECT t.identifier, count(*) FROM samples s JOIN types t ON t.id = s.type_id GROUP BY t.identifier")
            var counts: [String: Int] = [:]
            for row in 0..<rows.count { counts[rows.text(row, 0) ?? ""] = Int(rows.int64(row, 1)) }
            let series = try connection.query("SELECT count(*) FROM heartbeat_series").int64(0, 0)
            if series > 0 { counts[HealthType.heartbeatSeries.identifier, default: 0] += Int(series) }
            let tombstones = try connection.query("SELECT count(*) FROM tombstones").int64(0, 0)
            return (counts, Int(tombstones))
        }
    }
}
