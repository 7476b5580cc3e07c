import Foundation
import Support
import TestSupport
import Testing

/// Kills writers with SIGKILL at random moments (`wearhouse import-samples` 50 times, `wearhouse replay` 8 times,
/// the service writing for an app through the D-Bus API twice) and checks that the store survives: integrity holds, every batch that reported success (or that a check saw
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
        // How long the first, whole import took here: the kills are spread over that, on any machine.
        let clock = ContinuousClock()
        var firstImport = Duration.milliseconds(120)

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

            let started = clock.now
            let process = try WearhouseRunner.start(["import-samples", "--store", store, file.path])
            // The first batch is written whole, so that the store exists whatever the kills hit (a writer killed
            // before it created the file leaves no store, and `store check` then rightly says so).
            if batch > 0 {
                let microseconds =
                    firstImport.components.seconds * 1_000_000
                    + firstImport.components.attoseconds / 1_000_000_000_000
                usleep(UInt32(clamping: Int64.random(in: 0...max(1, microseconds * 9 / 10), using: &generator)))
                process.signal(SIGKILL)
            }
            process.wait()
            if batch == 0 { firstImport = clock.now - started }
            if process.wait().succeeded {
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

        // The killed runs replay at 2,000 times recorded speed, so that the trace's 10,000 s take 5 s whatever the
        // machine and every kill (within the first 2 s) lands mid-way; the last run replays as fast as it can.
        var generator = SystemRandomNumberGenerator()
        var stored = 0
        var killed = 0
        for _ in 0..<8 {
            let process = try WearhouseRunner.start(["replay", trace.path, "--store", store, "--speed", "2000"])
            usleep(UInt32.random(in: 100_000...2_000_000, using: &generator))
            process.signal(SIGKILL)
            if !process.wait().exited { killed += 1 }
            guard FileManager.default.fileExists(atPath: store) else { continue }
            let now = try Self.storedHeartRates(store)
            #expect(now >= stored, "a kill lost committed samples (\(stored) before, \(now) after)")
            stored = now
        }
        #expect(killed == 8, "a paced replay outlasts every kill (killed \(killed) of 8)")
        let whole = try WearhouseRunner.run(["replay", trace.path, "--store", store, "--speed", "max"])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(try Self.storedHeartRates(store) == notifications)
    }

    /// The service writing for an app through the D-Bus API (`busctl SaveSamples`, one sample a call), killed with
    /// SIGKILL at random moments, twice: the store stays intact, every save the app saw answered is stored, and
    /// sending every sample again (one call) through a fresh service stores each exactly once.
    @Test func sigkillOfTheServiceWritingThroughTheAPINeverCorruptsLosesOrDuplicates() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-kill-api-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("health.db").path
        let app = "uid\(getuid()):/usr/bin/busctl"
        #expect(try WearhouseRunner.run(["grant", app, "--write", "heartRate", "--store", store]).status == 0)
        let base: Int64 = 1_795_946_400_000
        let perRound = 40
        var generator = SystemRandomNumberGenerator()

        /// Starts the service and returns once it owns its name.
        func startService() throws -> ChildProcess {
            let service = try WearhouseRunner.start([
                "run", "--store", store, "--bus", bus.address, "--api", bus.address,
            ])
            while service.isRunning {
                let owned = try WearhouseRunner.runTool(
                    "/usr/bin/busctl",
                    [
                        "--address=\(bus.address)", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                        "org.freedesktop.DBus", "NameHasOwner", "s", "org.wearhouse.Health1",
                    ])
                if owned.stdout.hasPrefix("b true") { break }
                usleep(20_000)
            }
            return service
        }
        /// Saves samples `range` one call each, in a shell loop that appends each answered call to `answers`.
        func save(_ range: Range<Int>, answers: URL) throws -> ChildProcess {
            let script = """
                i=\(range.lowerBound)
                while [ $i -lt \(range.upperBound) ]; do
                  t=$((\(base) + i * 1000))
                  if out=$(busctl --address='\(bus.address)' call org.wearhouse.Health1 /org/wearhouse/Health1 \\
                      org.wearhouse.Health1 SaveSamples 'a(sxxdsa{sv})' 1 heartRate $t $t 70 '' 0 2>/dev/null); then
                    echo "$i $out" >> '\(answers.path)'
                  fi
                  i=$((i + 1))
                done
                """
            return try ChildProcess.start("/bin/sh", ["-c", script])
        }

        let answers = directory.appendingPathComponent("answers")
        for round in 0..<2 {
            let service = try startService()
            let writer = try save(round * perRound..<(round + 1) * perRound, answers: answers)
            usleep(UInt32.random(in: 50_000...500_000, using: &generator))
            service.signal(SIGKILL)
            service.wait()
            writer.wait()
            #expect(!service.wait().exited)
        }
        let answered = ((try? String(contentsOf: answers, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(answered.allSatisfy { $0.hasSuffix("as 1 \"inserted\"") })
        let stored = try Self.storedHeartRates(store)
        #expect(stored >= answered.count, "answered saves were lost (\(answered.count) answered, \(stored) stored)")
        // At most the one call in flight at each kill was stored without its answer reaching the app.
        #expect(stored <= answered.count + 2, "\(stored) stored, \(answered.count) answered")

        // Everything again, through a fresh service: what was stored is a duplicate, the rest goes in once.
        let service = try startService()
        let everything = (0..<2 * perRound).flatMap { index -> [String] in
            let at = "\(base + Int64(index) * 1000)"
            return ["heartRate", at, at, "70", "", "0"]
        }
        let again = try WearhouseRunner.runTool(
            "/usr/bin/busctl",
            [
                "--address=\(bus.address)", "call", "org.wearhouse.Health1", "/org/wearhouse/Health1",
                "org.wearhouse.Health1", "SaveSamples", "a(sxxdsa{sv})", "\(2 * perRound)",
            ] + everything)
        service.signal(SIGTERM)
        service.wait()
        #expect(again.stdout.hasPrefix("as \(2 * perRound) "), "\(again.stderr)")
        #expect(again.stdout.components(separatedBy: "\"duplicate\"").count - 1 == stored)
        #expect(try Self.storedHeartRates(store) == 2 * perRound)
    }
}
