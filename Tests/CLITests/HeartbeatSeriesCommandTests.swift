import Foundation
import Health
import SQLiteStore
import Testing

/// `wearhouse samples` and `delete` with heartbeat series, through the real binary, on a store the test fills
/// through the library (nothing imports series from the command line yet).
@Suite struct HeartbeatSeriesCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    /// Two series of alice's strap and one of bob's watch, the second with a gap before its third beat.
    func fill() async throws {
        let strap = Device(name: "Polar H10", localIdentifier: "A0:9E:1A:00:00:01")
        let watch = Device(name: "PineTime", localIdentifier: "C7:00:00:00:00:02")
        let gateway = Source(identifier: "org.wearhouse.gateway")
        let minute: Int64 = 1_743_328_800_000  // 2025-03-30T10:00:00Z
        let rr = 1_000.0 * 900 / 1024  // 878.90625 ms, 900 BLE ticks
        let steady = (1...4).map { Beat(offsetMilliseconds: Double($0) * rr, rrMilliseconds: rr) }
        var gapped = steady
        gapped[2] = Beat(offsetMilliseconds: 5_000, rrMilliseconds: rr, precededByGap: true)
        gapped[3] = Beat(offsetMilliseconds: 5_000 + rr, rrMilliseconds: rr)
        let series = [
            HeartbeatSeriesSample(
                start: Instant(milliseconds: minute), end: Instant(milliseconds: minute + 60_000),
                startOffsetSeconds: 7_200, beats: steady, source: gateway, device: strap, subject: "alice"),
            HeartbeatSeriesSample(
                start: Instant(milliseconds: minute + 60_000), end: Instant(milliseconds: minute + 120_000),
                startOffsetSeconds: 7_200, beats: gapped, source: gateway, device: strap, subject: "alice"),
            HeartbeatSeriesSample(
                start: Instant(milliseconds: minute), end: Instant(milliseconds: minute + 60_000), beats: steady,
                source: gateway, device: watch, subject: "bob"),
        ]
        let writer = try SQLiteHealthStore(path: store)
        #expect(try await writer.save(series, as: .owner) == [.inserted, .inserted, .inserted])
    }

    @Test func listsSeriesAsATableCSVAndJSONWithBeats() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await fill()
        let table = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartbeatSeries", "--subject", "alice",
        ])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(
            table.stdout == """
                START                          END                            BEATS  MEAN RR   GAPS  DEVICE     SUBJECT  SOURCE
                2025-03-30T12:00:00.000+02:00  2025-03-30T12:01:00.000+02:00  4      878.9 ms  0     Polar H10  alice    org.wearhouse.gateway
                2025-03-30T12:01:00.000+02:00  2025-03-30T12:02:00.000+02:00  4      878.9 ms  1     Polar H10  alice    org.wearhouse.gateway

                """)

        let csv = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartbeatSeries", "--format", "csv", "--device",
            "C7:00:00:00:00:02",
        ])
        let lines = csv.stdout.split(separator: "\n")
        #expect(
            lines.first
                == "uuid,type,start,end,beat_count,mean_rr_ms,gaps,source,source_version,device,device_name,subject")
        #expect(lines.count == 2)
        #expect(
            lines.last?.hasSuffix(
                ",heartbeatSeries,2025-03-30T10:00:00.000Z,2025-03-30T10:01:00.000Z,4,878.906,0,org.wearhouse.gateway,,C7:00:00:00:00:02,PineTime,bob"
            ) == true)

        let json = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartbeatSeries", "--format", "json", "--from",
            "2025-03-30T10:01:00Z", "--subject", "alice",
        ])
        let series = try WearhouseRunner.json(json.stdout)
        #expect(series["beat_count"] as? Int == 4)
        #expect(series["gaps"] as? Int == 1)
        let beats = try #require(series["beats"] as? [[String: Any]])
        #expect(beats.map { $0["offset_ms"] as? Double } == [878.90625, 1_757.8125, 5_000, 5_878.90625])
        #expect(beats.map { $0["rr_ms"] as? Double } == Array(repeating: 878.90625, count: 4))
        #expect(beats.map { $0["gap"] as? Bool } == [false, false, true, false])
    }

    @Test func deletesSeriesByTimeRange() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await fill()
        let deleted = try WearhouseRunner.run([
            "delete", "--store", store, "--type", "heartbeatSeries", "--from", "2025-03-30T10:00:30Z", "--to",
            "2025-03-30T11:00:00Z", "--subject", "alice", "--yes",
        ])
        #expect(deleted.stdout == "deleted 2 samples\n", "\(deleted.stderr)")
        let left = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartbeatSeries", "--format", "csv",
        ])
        #expect(left.stdout.split(separator: "\n").count == 2)
        let check = try WearhouseRunner.json(
            try WearhouseRunner.run(["store", "check", "--store", store, "--json"]).stdout)
        #expect((check["samples"] as? [String: Int])?["heartbeatSeries"] == 1)
    }
}
