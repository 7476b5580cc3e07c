import Foundation
import Health
import SQLiteStore
import Testing

/// `wearhouse samples` prints every matching sample unless `--limit` cuts it, and then says so on stderr.
@Suite struct SamplesListingTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    /// 1,234 heart-rate samples a second apart (more than the old cut at 1,000 and one page of 1,000) and 3 heartbeat series, saved
    /// through the library.
    func fill() async throws {
        let writer = try SQLiteHealthStore(path: store)
        let start: Int64 = 1_743_328_800_000  // 2025-03-30T10:00:00Z
        let source = Source(identifier: "org.wearhouse.gateway")
        let samples = (0..<1_234).map { (index: Int) -> QuantitySample in
            QuantitySample(
                type: .heartRate, start: Instant(milliseconds: start + Int64(index) * 1_000),
                end: Instant(milliseconds: start + Int64(index) * 1_000), value: Double(60 + index % 40),
                source: source)
        }
        _ = try await writer.save(samples, as: .owner)
        let beats = (1...3).map { Beat(offsetMilliseconds: Double($0) * 1_000, rrMilliseconds: 1_000) }
        let series = (0..<3).map { (index: Int) -> HeartbeatSeriesSample in
            let from = start + Int64(index) * 60_000
            return HeartbeatSeriesSample(
                start: Instant(milliseconds: from), end: Instant(milliseconds: from + 60_000), beats: beats,
                source: source)
        }
        _ = try await writer.save(series, as: .owner)
    }

    @Test func everySampleIsPrintedByDefaultAndACutIsReported() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await fill()
        let csv = try WearhouseRunner.run(["samples", "--store", store, "--type", "heartRate", "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let lines = csv.stdout.split(separator: "\n")
        #expect(lines.count == 1 + 1_234)
        #expect(lines.filter { $0.hasPrefix("uuid,") }.count == 1)
        #expect(Set(lines.dropFirst()).count == 1_234)
        #expect(csv.stderr.isEmpty)

        let cut = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartRate", "--format", "json", "--limit", "3",
        ])
        #expect(cut.status == 0, "\(cut.stderr)")
        #expect(cut.stdout.split(separator: "\n").count == 3)
        #expect(cut.stderr == "wearhouse: printed the first 3 samples; more match (--limit 0 prints all)\n")

        let exact = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartbeatSeries", "--format", "csv", "--limit", "3",
        ])
        #expect(exact.stdout.split(separator: "\n").count == 1 + 3)
        #expect(exact.stderr.isEmpty)
        let series = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartbeatSeries", "--limit", "2",
        ])
        #expect(series.stdout.split(separator: "\n").count == 1 + 2)
        #expect(series.stderr == "wearhouse: printed the first 2 samples; more match (--limit 0 prints all)\n")
    }

    /// `--sort` orders the listing by its keys (all pages of it) and refuses what it cannot mean.
    @Test func sortOrdersTheWholeListing() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try await fill()
        let newest = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartRate", "--format", "csv", "--sort", "-start,-end",
        ])
        #expect(newest.status == 0, "\(newest.stderr)")
        let rows = newest.stdout.split(separator: "\n").dropFirst().map { String($0.split(separator: ",")[2]) }
        #expect(rows.count == 1_234)
        #expect(rows == rows.sorted(by: >))
        #expect(rows.first == "2025-03-30T10:20:33.000Z")
        let series = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartbeatSeries", "--format", "csv", "--sort", "-end",
        ])
        #expect(series.status == 0, "\(series.stderr)")
        for bad in ["middle", "start,start", "start,end,start"] {
            let refused = try WearhouseRunner.run(["samples", "--store", store, "--type", "heartRate", "--sort", bad])
            #expect(refused.status != 0, "\(bad)")
            #expect(refused.stderr.contains("--sort"), "\(bad): \(refused.stderr)")
        }
    }
}
