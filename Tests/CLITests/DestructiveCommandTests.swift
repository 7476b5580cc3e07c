import Foundation
import Health
import SQLiteStore
import TestSupport
import Testing

/// `delete` and `store prune`: dry runs count exactly what the real command deletes, and without a terminal to
/// ask on they need `--yes`.
@Suite struct DestructiveCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    /// Three heart-rate samples and a heartbeat series of 2025-03-30 (both types kept 365 days, so all four are
    /// past it), and a step count kept forever; returns the heart-rate samples.
    func fill() async throws -> [QuantitySample] {
        let writer = try SQLiteHealthStore(path: store)
        let start: Int64 = 1_743_328_800_000  // 2025-03-30T10:00:00Z
        let source = Source(identifier: "org.wearhouse.gateway")
        let hearts = (0..<3).map { (index: Int) -> QuantitySample in
            QuantitySample(
                type: .heartRate, start: Instant(milliseconds: start + Int64(index) * 1_000),
                end: Instant(milliseconds: start + Int64(index) * 1_000), value: 60, source: source)
        }
        let steps = QuantitySample(
            type: .stepCount, start: Instant(milliseconds: start), end: Instant(milliseconds: start + 60_000),
            value: 100, source: source)
        _ = try await writer.save(hearts + [steps], as: .owner)
        let beats = [Beat(offsetMilliseconds: 1_000, rrMilliseconds: 1_000)]
        _ = try await writer.save(
            [
                HeartbeatSeriesSample(
                    start: Instant(milliseconds: start), end: Instant(milliseconds: start + 60_000), beats: beats,
                    source: source)
            ], as: .owner)
        try await writer.setRetention(of: .heartRate, days: 365)
        try await writer.setRetention(of: .heartbeatSeries, days: 365)
        return hearts
    }

    func count(_ type: String) throws -> Int? {
        let check = try WearhouseRunner.run(["store", "check", "--store", store, "--json"])
        return (try WearhouseRunner.json(check.stdout)["samples"] as? [String: Int])?[type]
    }

    @Test func deleteByIdCountsOnlyWhatExistsAndNeedsYes() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let hearts = try await fill()
        let ids = [hearts[0].id, UUID(), hearts[0].id].map(\.uuidString).joined(separator: ",")
        let dryRun = try WearhouseRunner.run(["delete", "--store", store, "--id", ids, "--dry-run"])
        #expect(dryRun.stdout == "would delete 1 samples\n", "\(dryRun.stderr)")
        let refused = try WearhouseRunner.run(["delete", "--store", store, "--id", ids])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("pass --yes"), "\(refused.stderr)")
        #expect(try count("heartRate") == 3)
        let deleted = try WearhouseRunner.run(["delete", "--store", store, "--id", ids, "--yes"])
        #expect(deleted.stdout == "deleted 1 samples\n", "\(deleted.stderr)")
        #expect(try count("heartRate") == 2)
        let both = try WearhouseRunner.run([
            "delete", "--store", store, "--id", hearts[1].id.uuidString, "--type", "heartRate", "--from", "2025-03-30",
            "--to", "2025-03-31", "--yes",
        ])
        #expect(both.status == 64)
        #expect(both.stderr.contains("--id and --type cannot be used together"), "\(both.stderr)")
        #expect(try count("heartRate") == 2)
    }

    @Test func pruneHasADryRunAndNeedsYes() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try await fill()
        let dryRun = try WearhouseRunner.run(["store", "prune", "--store", store, "--dry-run"])
        #expect(dryRun.stdout == "would prune 4 samples\n", "\(dryRun.stderr)")
        let refused = try WearhouseRunner.run(["store", "prune", "--store", store])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("pass --yes"), "\(refused.stderr)")
        #expect(try count("heartRate") == 3)
        let pruned = try WearhouseRunner.run(["store", "prune", "--store", store, "--yes"])
        #expect(pruned.stdout == "pruned 4 samples\n", "\(pruned.stderr)")
        #expect(try count("heartRate") == nil)
        #expect(try count("stepCount") == 1)
    }

    /// On a terminal (util-linux `script` gives the command one) prune asks, and only `y` goes ahead.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func onATerminalPruneAsks() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try await fill()
        let command = "\(WearhouseRunner.executable.path) store prune --store \(store)"
        let declined = try runTool("/usr/bin/script", ["-qec", command, "/dev/null"], stdin: "n\n")
        #expect(declined.stdout.contains("Prune 4 samples? [y/N] "), "\(declined.stdout)")
        #expect(declined.stdout.contains("pruned 0 samples"))
        #expect(try count("heartRate") == 3)
        let accepted = try runTool("/usr/bin/script", ["-qec", command, "/dev/null"], stdin: "y\n")
        #expect(accepted.stdout.contains("pruned 4 samples"), "\(accepted.stdout)")
        #expect(try count("heartRate") == nil)
    }
}
