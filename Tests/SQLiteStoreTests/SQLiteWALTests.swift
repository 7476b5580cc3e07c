import Foundation
import Testing

@testable import SQLiteStore

/// A writer that commits again and again (the gateway's store writer, a replay) keeps the WAL within its bound.
/// SQLite checkpoints the WAL at a commit once it holds `wal_autocheckpoint` pages, but gives up when the
/// connection still has a statement reading; a write transaction's lookups (a chunk's tail, a rollup row) leave
/// some at a row, so ``SQLiteConnection/transaction(_:)`` rewinds them before it commits.
@Suite struct SQLiteWALTests {
    @Test func aCommitAfterAReadLeftAtARowStillCheckpoints() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-wal-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("wal.db").path
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA wal_autocheckpoint = 100")
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        // 300 transactions of about three pages each, every one reading a row it leaves the statement at.
        for round in 0..<300 {
            try connection.transaction {
                let reader = try connection.cached("SELECT data FROM t WHERE id = ?1")
                try reader.bind(1, Int64(max(round - 1, 0)))
                _ = try reader.step()
                let insert = try connection.cached("INSERT INTO t (id, data) VALUES (?1, ?2)")
                try insert.bind(1, Int64(round))
                try insert.bind(2, [UInt8](repeating: UInt8(round % 256), count: 8_000))
                try insert.step()
            }
        }
        // Checkpointed every 100 pages or so: the WAL never held more than that and one transaction (without the
        // rewind it kept every page, about 900, and the database file none).
        let wal = Self.size(path + "-wal")
        #expect(wal < 120 * 4_120, "WAL of \(wal) bytes")
        #expect(Self.size(path) > 200 * 4_096)
    }

    static func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
    }
}
