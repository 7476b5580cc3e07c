import Foundation
import Health
import SQLiteStore
import Testing

/// `wearhouse export --format sqlite` through the real binary, read back with the sqlite3 shell.
@Suite struct SQLiteExportTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-sqlite-\(UUID())")
    var store: String { directory.appendingPathComponent("health.db").path }
    var export: String { directory.appendingPathComponent("export.db").path }

    /// Gateway heart rate as the service writes it (a batch: chunks, no row per sample), app rows with metadata,
    /// steps, and a heartbeat series.
    func fill() async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let writer = try SQLiteHealthStore(path: store)
        let gateway = Source(identifier: "org.wearhouse.gateway", version: "1.2")
        let strap = Device(name: "Polar H10", localIdentifier: "A0:9E:1A:00:00:01")
        let origin: Int64 = 1_743_321_600_000  // 2025-03-30T08:00:00Z
        let streamed = (0..<2_500).map { second in
            QuantitySample(
                type: .heartRate, start: Instant(milliseconds: origin + Int64(second) * 1_000),
                end: Instant(milliseconds: origin + Int64(second) * 1_000), value: Double(60 + second % 40),
                source: gateway, device: strap, subject: "alice")
        }
        let beats = (1...3).map {
            Beat(offsetMilliseconds: Double($0) * 900, rrMilliseconds: 900, precededByGap: false)
        }
        let series = HeartbeatSeriesSample(
            start: Instant(milliseconds: origin), end: Instant(milliseconds: origin + 3_000), beats: beats,
            source: gateway, device: strap, subject: "alice")
        _ = try await writer.save(SampleBatch(streamed, heartbeats: [series]), as: .owner)
        let app = Source(identifier: "com.example.app")
        _ = try await writer.save(
            [
                QuantitySample(
                    type: .heartRate, start: Instant(milliseconds: origin), end: Instant(milliseconds: origin),
                    value: 70, source: app, subject: "bob", metadata: [MetadataKey.externalUUID: .string("r-2")]),
                QuantitySample(
                    type: .stepCount, start: Instant(milliseconds: origin),
                    end: Instant(milliseconds: origin + 600_000), startOffsetSeconds: 7_200, value: 1_000, source: app),
            ], as: .owner)
    }

    func sqlite(_ sql: String) throws -> String {
        try WearhouseRunner.runTool("/usr/bin/sqlite3", [export, sql]).stdout
    }

    @Test func countsPerTypeEqualStoreCheckAndEveryValueIsInTheRow() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await fill()
        let result = try WearhouseRunner.run(["export", "--format", "sqlite", "--out", export, "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("exported 2503 samples"))
        let check = try WearhouseRunner.run(["store", "check", "--store", store])
        let countsLine = check.stdout.split(separator: "\n").first { $0.hasPrefix("samples ") } ?? ""
        // `samples    heartRate 2501, heartbeatSeries 1, stepCount 1`
        let expected = countsLine.dropFirst("samples".count).split(separator: ",").map {
            $0.split(separator: " ").joined(separator: "|")
        }.sorted()
        let counted = try sqlite("SELECT type, count(*) FROM samples GROUP BY type ORDER BY type").split(
            separator: "\n"
        ).map(String.init)
        #expect(!expected.isEmpty && counted == expected, "\(counted) vs \(expected) from \(check.stdout)")

        #expect(
            try sqlite(
                "SELECT start, end, start_epoch_ms, utc_offset_seconds, value, unit, source, device, subject FROM samples "
                    + "WHERE type = 'stepCount'")
                == "2025-03-30T10:00:00.000+02:00|2025-03-30T10:10:00.000+02:00|1743321600000|7200|1000.0|count|"
                + "com.example.app||\n")
        #expect(
            try sqlite(
                "SELECT json_extract(metadata, '$.externalUUID'), subject FROM samples WHERE source != "
                    + "'org.wearhouse.gateway' AND type = 'heartRate'") == "r-2|bob\n")
        #expect(
            try sqlite(
                "SELECT count(*), min(value), max(value), device FROM samples WHERE source = "
                    + "'org.wearhouse.gateway' AND type = 'heartRate'") == "2500|60.0|99.0|A0:9E:1A:00:00:01\n")
        #expect(try sqlite("SELECT count(*), sum(rr_ms) FROM heartbeats") == "3|2700.0\n")
        #expect(
            try sqlite("SELECT identifier, unit, aggregation FROM types WHERE identifier = 'heartRate'")
                == "heartRate|count/min|discrete\n")
    }

    @Test func sqliteNeedsOut() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await fill()
        let result = try WearhouseRunner.run(["export", "--format", "sqlite", "--store", store])
        #expect(result.status == 64 && result.stderr.contains("--format sqlite needs --out"))
    }
}
