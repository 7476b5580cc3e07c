import Foundation
import Support
import TestSupport
import Testing

/// SIGKILL while `wearhouse import-samples` saves batches that mix every kind a file can hold (heart rates the
/// SQLite engine keeps in chunks, steps kept as rows, sleep stages, a heartbeat series, a blood pressure
/// correlation with its two members), on SQLite and on PostgreSQL: after the kills, `store check` passes and every
/// batch is there whole, all its kinds, or not at all; a correlation is never there without its members, or they
/// without it.
@Suite struct MixedBatchCrashTests {
    enum Engine: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgresql
        var testDescription: String { rawValue }
    }

    /// A batch's samples: 240 heart rates, 24 steps, 4 sleep stages, 1 heartbeat series and 1 blood pressure (a
    /// systolic and a diastolic member), in its own hour.
    static let counts = [
        "heartRate": 240, "stepCount": 24, "sleepAnalysis": 4, "heartbeatSeries": 1, "bloodPressure": 1,
        "bloodPressureSystolic": 1, "bloodPressureDiastolic": 1,
    ]
    static let base = 1_735_689_600  // 2025-01-01T00:00:00Z

    static func lines(batch: Int) -> [String] {
        let hour = base + batch * 3_600
        var lines: [String] = []
        for second in 0..<240 {
            lines.append(
                "{\"type\":\"heartRate\",\"start\":\"\(isoUTC(hour + second * 15))\",\"value\":\(60 + second % 50),"
                    + "\"source\":\"org.wearhouse.gateway\",\"device\":\"A0:9E:1A:00:00:01\"}")
        }
        for slot in 0..<24 {
            lines.append(
                "{\"type\":\"stepCount\",\"start\":\"\(isoUTC(hour + slot * 150))\",\"end\":\"\(isoUTC(hour + slot * 150 + 150))\","
                    + "\"value\":\(100 + slot),\"source\":\"com.example.phone\"}")
        }
        for (stage, value) in [3, 4, 3, 5].enumerated() {
            lines.append(
                "{\"type\":\"sleepAnalysis\",\"start\":\"\(isoUTC(hour + stage * 900))\","
                    + "\"end\":\"\(isoUTC(hour + stage * 900 + 900))\",\"value\":\(value),\"source\":\"com.example.ring\"}"
            )
        }
        let pressure = { (type: String, value: Int) in
            "{\"type\":\"\(type)\",\"start\":\"\(isoUTC(hour + 1_800))\",\"value\":\(value),\"unit\":\"mmHg\","
                + "\"source\":\"com.example.cuff\"}"
        }
        lines.append(
            "{\"type\":\"bloodPressure\",\"start\":\"\(isoUTC(hour + 1_800))\",\"source\":\"com.example.cuff\","
                + "\"objects\":[\(pressure("bloodPressureSystolic", 120 + batch)),\(pressure("bloodPressureDiastolic", 80))]}"
        )
        let beats = (0..<60).map { "{\"offset_ms\":\(($0 + 1) * 1_000),\"rr_ms\":1000,\"gap\":false}" }
        lines.append(
            "{\"type\":\"heartbeatSeries\",\"start\":\"\(isoUTC(hour))\",\"end\":\"\(isoUTC(hour + 61))\","
                + "\"source\":\"org.wearhouse.gateway\",\"device\":\"A0:9E:1A:00:00:01\",\"beats\":[\(beats.joined(separator: ","))]}"
        )
        return lines
    }

    @Test(arguments: Engine.allCases) func sigkillLeavesEveryMixedBatchWholeOrAbsent(_ engine: Engine) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-kill-kinds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store: String
        switch engine {
        case .sqlite: store = directory.appendingPathComponent("health.db").path
        case .postgresql:
            let server = try PostgresServer.shared()
            let conninfo = try server.createDatabase()
            store = server.url(database: String(conninfo.split(separator: "=").last ?? ""))
        }
        var generator = SystemRandomNumberGenerator()
        let batches = 14
        var committed: [Int] = []
        // Kills land anywhere from the start to as long as the first, whole, import took (it also made the store,
        // so later imports are quicker): before, during and after the commit. Batch 1 is killed at once (before
        // its commit, whatever the machine's load) and the last one not at all, so that both cases happen.
        var span: UInt32 = 100_000
        for batch in 0..<batches {
            let file = directory.appendingPathComponent("batch-\(batch).ndjson")
            try (Self.lines(batch: batch).joined(separator: "\n") + "\n").write(
                to: file, atomically: true, encoding: .utf8)
            let started = ContinuousClock.now
            let process = try WearhouseRunner.start(["import-samples", "--store", store, file.path])
            if batch > 0, batch < batches - 1 {  // the first batch makes the store
                if batch > 1 { usleep(UInt32.random(in: 0...span, using: &generator)) }
                process.signal(SIGKILL)
            }
            process.wait()
            if batch == 0 {
                let took = ContinuousClock.now - started
                span = UInt32(
                    clamping: took.components.seconds * 1_000_000 + took.components.attoseconds / 1_000_000_000_000)
            }
            if process.wait().succeeded { committed.append(batch) }
        }
        #expect(committed.first == 0)
        #expect(committed.count < batches, "the kills should stop some batches")
        #expect(committed.count > 1, "some kills should come after the commit")

        let check = try WearhouseRunner.run(["store", "check", "--store", store, "--json"])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        if engine == .sqlite { #expect(try WearhouseRunner.json(check.stdout)["integrity"] as? [String] == ["ok"]) }

        // Which batches each type holds, and how many samples of each: a batch is all its kinds in full, or none.
        var present: [String: [Int: Int]] = [:]
        for type in Self.counts.keys {
            let listing = try WearhouseRunner.run([
                "samples", "--store", store, "--type", type, "--limit", "0", "--format", "json",
            ])
            #expect(listing.status == 0, "\(listing.stderr)")
            for line in listing.stdout.split(separator: "\n") {
                let start = try WearhouseRunner.json(line)["start"] as? String ?? ""
                let seconds = Int(
                    try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(start)
                        .timeIntervalSince1970)
                present[type, default: [:]][(seconds - Self.base) / 3_600, default: 0] += 1
            }
        }
        let whole = Set(present["heartRate", default: [:]].keys)
        #expect(whole.isSuperset(of: committed), "every batch that reported success is there")
        for (type, count) in Self.counts {
            let batchesOfType = present[type, default: [:]]
            #expect(Set(batchesOfType.keys) == whole, "\(type) is in the same batches as heartRate")
            for (batch, found) in batchesOfType { #expect(found == count, "batch \(batch) holds \(found) \(type)") }
        }
    }
}
