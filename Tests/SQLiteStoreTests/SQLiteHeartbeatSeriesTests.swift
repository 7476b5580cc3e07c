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
        try update.bind(1, [2, 0, 200, 1, 8] as [UInt8])
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

/// Stores written with schema 7 (heartbeat series in their first layout, blobs in version 1) migrate.
@Suite struct HeartbeatSeriesMigrationTests {
    @Test func aSchema7StoreKeepsItsSeries() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("health.db").path
        let source = Source(identifier: "org.wearhouse.gateway")
        let device = Device(name: "Polar H10", localIdentifier: "A0:9E:1A:00:00:01")
        let tick = 1_000.0 / 1_024
        let beats = [
            Beat(offsetMilliseconds: 900 * tick, rrMilliseconds: 900 * tick),
            Beat(offsetMilliseconds: 1_810 * tick, rrMilliseconds: 910 * tick),
            Beat(offsetMilliseconds: 5_000.5, rrMilliseconds: 905 * tick, precededByGap: true),
        ]
        let series = HeartbeatSeriesSample(
            start: Instant(seconds: 60), end: Instant(seconds: 120), beats: beats, source: source, device: device,
            subject: "alice", metadata: [MetadataKey.heartRateSensorLocation: .number(1)])
        do {
            // What a schema 7 wearhouse wrote: its migrations, then one series row with a version 1 blob.
            let old = try SQLiteConnection(path: path)
            for (index, migration) in SQLiteSchema.migrations.prefix(7).enumerated() {
                try old.execute(migration)
                try old.execute("PRAGMA user_version = \(index + 1)")
            }
            try old.execute(
                """
                INSERT INTO types (id, identifier) VALUES (1, 'heartbeatSeries');
                INSERT INTO sources (id, identifier) VALUES (1, 'org.wearhouse.gateway');
                INSERT INTO devices (id, key, name, local_id) VALUES (1, 'A0:9E:1A:00:00:01', 'Polar H10',
                    'A0:9E:1A:00:00:01');
                INSERT INTO subjects (id, name) VALUES (1, 'alice');
                UPDATE counters SET value = 7 WHERE name = 'seq';
                """)
            var blob: [UInt8] = [1, 0x20, 3]  // RR in 1/1024 s, offsets in µs, three beats
            for word: UInt64 in [1_800 << 2, 20 << 2, 9 << 2 | 2 | 1] {
                SeriesChunkCodec.appendUnsigned(word, to: &blob)
            }
            SeriesChunkCodec.appendUnsigned(5_000_500, to: &blob)
            let insert = try old.prepare(
                """
                INSERT INTO heartbeat_series (start_ms, source_id, device_id, end_ms, uuid, start_offset_s, subject_id,
                    writer, seq, metadata, beat_count, beats)
                VALUES (60000, 1, 1, 120000, ?1, 0, 1, 'owner', 7, '{"heartRateSensorLocation":{"number":1}}', 3, ?2)
                """)
            try insert.bind(1, series.id.bytes)
            try insert.bind(2, blob)
            try insert.step()
        }
        let store = try SQLiteHealthStore(path: path)
        #expect(try await store.report().schemaVersion == SQLiteSchema.currentVersion)
        let read = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        #expect(read == [series])
        // The replayed series is a duplicate (the blob was rewritten in the current version), and new ones go in.
        #expect(try await store.save([series], as: .owner) == [.duplicate])
        var next = series
        next.start = Instant(seconds: 120)
        next.end = Instant(seconds: 180)
        next.id = HeartbeatSeriesSample.derivedID(
            source: source.identifier, device: device.key, start: next.start, end: next.end)
        #expect(try await store.save([next], as: .owner) == [.inserted])
        let changes = try await store.changes(of: .heartbeatSeries, since: nil, limit: 10, as: .owner)
        #expect(changes.heartbeatSeries == [series, next])
        #expect(try await store.delete([series.id], as: .owner) == 1)
        #expect(try await store.integrityCheck() == ["ok"])
    }
}
