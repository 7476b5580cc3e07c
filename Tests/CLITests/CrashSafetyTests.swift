import Foundation
import Testing

/// Kills writers with SIGKILL at random moments (`wearhouse import-samples` 50 times, `wearhouse replay` 8 times)
/// and checks that the store survives: integrity holds, every batch that reported success (or that a check saw
/// committed) is there in full, nothing is duplicated when everything is written again.
@Suite struct CrashSafetyTests {
    @Test func sigkillDuringWritesNeverCorruptsOrLosesCommittedBatches() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.db").path
        var generator = SystemRandomNumberGenerator()
        let batchSize = 500
        var files: [URL] = []
        var committed: [Int] = []
        var killed = 0

        for batch in 0..<50 {
            // One batch: 500 one-per-second heart rates (a tenth of a second's import), a distinct time range per
            // batch.
            let base = 1_700_000_000 + batch * batchSize
            let lines = (0..<batchSize).map { index in
                "{\"type\":\"heartRate\",\"start\":\"\(isoUTC(base + index))\",\"value\":\(60 + index % 60),"
                    + "\"source\":\"org.wearhouse.gateway\",\"device\":\"A0:9E:1A:00:00:01\",\"subject\":\"alice\"}"
            }
            let file = directory.appendingPathComponent("batch-\(batch).ndjson")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            files.append(file)

            let process = Process()
            process.executableURL = WearhouseRunner.executable
            process.arguments = ["import-samples", "--store", store, file.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The first batch is written whole, so that the store exists whatever the kills hit (a writer killed
            // before it created the file leaves no store, and `store check` then rightly says so).
            if batch > 0 {
                usleep(UInt32.random(in: 0...120_000, using: &generator))
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            if process.terminationReason == .exit, process.terminationStatus == 0 {
                committed.append(batch)
            } else {
                killed += 1
            }
        }
        #expect(committed.first == 0, "the first batch is written whole")
        #expect(killed >= 10, "the random delays should kill most writers mid-way (killed \(killed) of 49)")

        let check = try WearhouseRunner.run(["store", "check", "--store", store, "--json"])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        #expect(try WearhouseRunner.json(check.stdout)["integrity"] as? [String] == ["ok"])
        let stored = (try WearhouseRunner.json(check.stdout)["samples"] as? [String: Int])?["heartRate"] ?? 0
        // Batches are atomic: the store holds whole batches only, and at least every committed one.
        #expect(stored % batchSize == 0)
        #expect(stored >= committed.count * batchSize)
        for batch in committed {
            let base = 1_700_000_000 + batch * batchSize
            let result = try WearhouseRunner.run([
                "samples", "--store", store, "--type", "heartRate", "--from", isoUTC(base), "--to",
                isoUTC(base + batchSize), "--limit", "0", "--format", "csv",
            ])
            #expect(result.stdout.split(separator: "\n").count == batchSize + 1, "batch \(batch) is incomplete")
        }

        // Writing everything again adds the missing batches and duplicates nothing.
        for file in files {
            #expect(try WearhouseRunner.run(["import-samples", "--store", store, file.path]).status == 0)
        }
        let after = try WearhouseRunner.run(["store", "check", "--store", store, "--json"])
        #expect((try WearhouseRunner.json(after.stdout)["samples"] as? [String: Int])?["heartRate"] == 50 * batchSize)
    }

    /// The heart rates stored in `store`, from `store check` (which also checks integrity).
    static func storedHeartRates(_ store: String) throws -> Int {
        let check = try WearhouseRunner.run(["store", "check", "--store", store, "--json"])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        #expect(try WearhouseRunner.json(check.stdout)["integrity"] as? [String] == ["ok"])
        return (try WearhouseRunner.json(check.stdout)["samples"] as? [String: Int])?["heartRate"] ?? 0
    }

    /// `wearhouse replay` (the live ingest path, batches committed as it goes) killed at random moments, 8 times:
    /// the store stays intact, what one run committed is still there after the next kill, and replaying the
    /// trace to the end stores each notification's sample exactly once.
    @Test func sigkillDuringReplayNeverCorruptsLosesOrDuplicates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-kill-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.db").path
        let notifications = 10_000
        let wall: Int64 = 1_795_946_400_000_000
        var lines = [
            #"{"wearhouse-trace":1,"recorder":"test","origin":"live","series-window-ms":60000,"gap-threshold-ms":2500}"#,
            #"{"kind":"sensor","sensor":"C0:FF:EE:00:00:01","name":"Strap","subject":"alice","source":"wearhouse","#
                + #""source-version":"test","time-zone":"UTC","characteristics":["2a37"],"mono-ns":0,"#
                + "\"wall-us\":\(wall)}",
        ]
        for index in 1...notifications {
            let value = String(60 + index % 60, radix: 16)
            lines.append(
                #"{"kind":"notification","sensor":"C0:FF:EE:00:00:01","uuid":"2a37","value":"06"#
                    + "\(value)\",\"mono-ns\":\(Int64(index) * 1_000_000_000),\"wall-us\":"
                    + "\(wall + Int64(index) * 1_000_000)}")
        }
        let trace = directory.appendingPathComponent("strap.trace")
        try (lines.joined(separator: "\n") + "\n").write(to: trace, atomically: true, encoding: .utf8)

        var generator = SystemRandomNumberGenerator()
        var stored = 0
        var killed = 0
        for _ in 0..<8 {
            let process = Process()
            process.executableURL = WearhouseRunner.executable
            process.arguments = ["replay", trace.path, "--store", store, "--speed", "max"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 20_000...300_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { killed += 1 }
            guard FileManager.default.fileExists(atPath: store) else { continue }
            let now = try Self.storedHeartRates(store)
            #expect(now >= stored, "a kill lost committed samples (\(stored) before, \(now) after)")
            stored = now
        }
        #expect(killed >= 3, "the random delays should kill most replays mid-way (killed \(killed) of 8)")
        let whole = try WearhouseRunner.run(["replay", trace.path, "--store", store, "--speed", "max"])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(try Self.storedHeartRates(store) == notifications)
    }
}
