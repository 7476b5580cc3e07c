import Foundation
public import Health
internal import StoreEngine

/// Retention: how many days of each type the store keeps. Pruning deletes older samples, their chunks and
/// their rollups without tombstones: it is a storage policy of this store, and apps keep what they synced.
extension SQLiteHealthStore {
    /// Keeps `type` for `days` days (`nil`: forever).
    public func setRetention(of type: HealthType, days: Int?) throws {
        defer { connection.resetCachedStatements() }
        if let days {
            try RetentionLimits.check(days)
            let statement = try connection.cached("INSERT OR REPLACE INTO retention (type, days) VALUES (?1, ?2)")
            try statement.bind(1, type.identifier)
            try statement.bind(2, Int64(days))
            try statement.step()
        } else {
            let statement = try connection.cached("DELETE FROM retention WHERE type = ?1")
            try statement.bind(1, type.identifier)
            try statement.step()
        }
    }

    /// Every type with a retention period, in days.
    public func retention() throws -> [String: Int] {
        defer { connection.resetCachedStatements() }
        let statement = try connection.cached("SELECT type, days FROM retention")
        var result: [String: Int] = [:]
        while try statement.step() { result[statement.text(0) ?? ""] = Int(statement.int64(1)) }
        return result
    }

    /// Deletes the samples that ended before their type's retention period; returns how many. Also drops
    /// access-log entries older than ``accessLogDays`` and keeps the side file's log within its capacity.
    @discardableResult
    public func prune() throws -> Int {
        try prune(rehearse: false)
    }

    /// How many samples ``prune()`` would delete now (the same deletion, rolled back).
    public func pruneCount() throws -> Int {
        try prune(rehearse: true)
    }

    private func prune(rehearse: Bool) throws -> Int {
        defer { connection.resetCachedStatements() }
        let periods = try retention()
        if !rehearse { try pruneAccessLog(before: now().milliseconds - Int64(Self.accessLogDays) * 86_400_000) }
        return try RehearsalRollback.run(rehearse: rehearse) { finish in try prune(periods, finish) }
    }

    private func prune(_ periods: [String: Int], _ finish: (Int) throws -> Int) throws -> Int {
        try writeTransaction {
            var removed = 0
            for (identifier, days) in periods {
                // A period beyond the limit (stored before there was one) keeps everything.
                guard RetentionLimits.days.contains(days), let typeID = try existingTypeID(identifier) else { continue }
                let cutoff = now().milliseconds - Int64(days) * 86_400_000
                let rows = try connection.cached("DELETE FROM samples WHERE type_id = ?1 AND end_ms < ?2")
                try rows.bind(1, typeID)
                try rows.bind(2, cutoff)
                try rows.step()
                removed += connection.changes
                if identifier == HealthType.heartbeatSeries.identifier {
                    let series = try connection.cached(
                        "DELETE FROM heartbeat_series WHERE start_ms < ?1 AND end_ms < ?1")
                    try series.bind(1, cutoff)
                    try series.step()
                    removed += connection.changes
                }
                // Whole chunks that ended before the cutoff go at once; a chunk across it is rewritten.
                let count = try connection.cached(
                    "SELECT coalesce(sum(count), 0) FROM series_chunks WHERE type_id = ?1 AND end_ms < ?2")
                try count.bind(1, typeID)
                try count.bind(2, cutoff)
                if try count.step() { removed += Int(count.int64(0)) }
                count.reset()
                let chunks = try connection.cached("DELETE FROM series_chunks WHERE type_id = ?1 AND end_ms < ?2")
                try chunks.bind(1, typeID)
                try chunks.bind(2, cutoff)
                try chunks.step()
                forgetTails()  // the transaction's tails (SQLiteHealthStore+Tails.swift) may name those chunks
                let straddling = try connection.cached(
                    "SELECT id FROM series_chunks WHERE type_id = ?1 AND start_ms < ?2")
                try straddling.bind(1, typeID)
                try straddling.bind(2, cutoff)
                var ids: [Int64] = []
                while try straddling.step() { ids.append(straddling.int64(0)) }
                for id in ids {
                    guard let chunk = try chunk(id: id) else { continue }
                    let kept = chunk.points.filter { $0.start + $0.duration >= cutoff }
                    removed += chunk.points.count - kept.count
                    try write(kept, key: chunk.key, replacing: id)
                }
                let rollups = try connection.cached("DELETE FROM rollups WHERE type_id = ?1 AND bucket_ms < ?2")
                try rollups.bind(1, typeID)
                try rollups.bind(2, Rollup.bucket(cutoff))
                try rollups.step()
                // The quarter hour the cutoff falls in may have lost some samples: rebuild it.
                let partial = try connection.cached(
                    "SELECT source_id, device_id, subject_id FROM rollups WHERE type_id = ?1 AND bucket_ms = ?2")
                try partial.bind(1, typeID)
                try partial.bind(2, Rollup.bucket(cutoff))
                var keys: [(Int64, Int64, Int64)] = []
                while try partial.step() { keys.append((partial.int64(0), partial.int64(1), partial.int64(2))) }
                for (source, device, subject) in keys {
                    noteRemoved(typeID: typeID, sourceID: source, deviceID: device, subjectID: subject, start: cutoff)
                }
                // The days before the cutoff's go; its own day lost the quarter hours before the cutoff: rebuilt.
                let days = try connection.cached("DELETE FROM day_rollups WHERE type_id = ?1 AND day_ms < ?2")
                try days.bind(1, typeID)
                try days.bind(2, Rollup.day(cutoff))
                try days.step()
                let partialDay = try connection.cached(
                    "SELECT source_id, device_id, subject_id FROM day_rollups WHERE type_id = ?1 AND day_ms = ?2")
                try partialDay.bind(1, typeID)
                try partialDay.bind(2, Rollup.day(cutoff))
                while try partialDay.step() {
                    staleDayRollups.insert(
                        RollupKey(
                            typeID: typeID, sourceID: partialDay.int64(0), deviceID: partialDay.int64(1),
                            subjectID: partialDay.int64(2), bucket: Rollup.day(cutoff)))
                }
                try pruneCumulativeRollups(typeID: typeID, cutoff: cutoff)
            }
            return try finish(removed)
        }
    }
}
