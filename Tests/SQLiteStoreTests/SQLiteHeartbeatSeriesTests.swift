import Foundation
import Health
import Testing

@testable import SQLiteStore

/// What the SQLite engine does with heartbeat series beyond the conformance suite: damaged blobs, the store
/// report, retention.
@Suite struct SQLiteHeartbeatSeriesTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "wearhouse-tests-\(UUID().uuidString)")
    var path: String { directory.appendingPathComponent("health.db").path }

    func series(minute: Int64) -> HeartbeatSeriesSample {
        let beats = (1...50).map { Beat(offsetMilliseconds: Double($0) * 1_000, rrMilliseconds: 1_000) }
        return HeartbeatSeriesSample(
            start: Instant(seconds: minute * 60), end: Instant(seconds: minute * 60 + 60), beats: beats,
            source: Source(identifier: "org.wearhouse.gateway"), subject: "alice")
    }

    @Test func aDamagedBeatsBlobIsAClearErrorNotACrash() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: path)
        let damaged = series(minute: 1)
        _ = try await store.save([series(minute: 0), damaged], as: .owner)
        // Another program (or a bad disk) overwrote the blob with a truncated one.
        let other = try SQLiteConnection(path: path)
        let update = try other.prepare("UPDATE heartbeat_series SET beats = ?1 WHERE start_ms = ?2")
        try update.bind(1, [1, 0, 200, 1, 8] as [UInt8])
        try update.bind(2, damaged.start.milliseconds)
        try update.step()
        let error = await #expect(throws: SQLiteError.self) {
            try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner)
        }
        #expect(error?.code == 11)
        #expect(error?.message.contains("heartbeat series \(damaged.id.uuidString.lowercased())") == true)
        #expect(error?.message.contains("count 200 exceeds the blob size") == true)
        // What does not touch the damaged row still works, and so does deleting it.
        let before = try await store.heartbeatSeries(
            SampleQuery(type: .heartbeatSeries, to: Instant(seconds: 30)), as: .owner)
        #expect(before.series.count == 1)
        #expect(try await store.delete([damaged.id], as: .owner) == 1)
        #expect(try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series.count == 1)
    }

    @Test func reportCountsAndRetentionPrunesSeries() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = Instant(seconds: 3 * 86_400)
        let store = try SQLiteHealthStore(path: path, now: { now })
        // One series an hour for three days.
        _ = try await store.save((0..<72).map { series(minute: $0 * 60) }, as: .owner)
        #expect(try await store.report().counts["heartbeatSeries"] == 72)
        try await store.setRetention(of: .heartbeatSeries, days: 1)
        #expect(try await store.prune() == 48)
        let left = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        #expect(left.count == 24)
        #expect(left.allSatisfy { $0.end.milliseconds >= 2 * 86_400_000 })
    }
}
