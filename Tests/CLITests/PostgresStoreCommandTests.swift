import Foundation
import Synchronization
import TestSupport
import Testing

/// The store commands on a PostgreSQL store (`--store postgresql://...`, `WEARHOUSE_STORE`), on the test
/// process's throwaway server: the same output as on a SQLite file.
@Suite struct PostgresStoreCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var file: String { directory.appendingPathComponent("health.db").path }

    /// A fresh database's `postgresql://` URL.
    func database() throws -> String {
        let server = try PostgresServer.shared()
        let conninfo = try server.createDatabase()
        return server.url(database: String(conninfo.split(separator: "=").last ?? ""))
    }

    /// An import of three batches (ImportReader.batchLines) is one transaction on PostgreSQL too: a line the store
    /// refuses in the last batch names its line and leaves nothing; without it, every batch is stored.
    @Test func aMultiBatchImportIsAllOrNothing() throws {
        let url = try database()
        let bad = StreamingImportTests.lines(count: 25_000, base: 1_700_000_000, bad: 23_456)
        let refused = try WearhouseRunner.run(["import-samples", "--store", url, "-"], stdin: bad)
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("stdin:23456: "), "\(refused.stderr)")
        let good = StreamingImportTests.lines(count: 25_000, base: 1_700_000_000)
        let stored = try WearhouseRunner.run(["import-samples", "--store", url, "-"], stdin: good)
        #expect(stored.stdout.hasPrefix("25000 samples: 25000 inserted"), "\(stored.stderr)")
        let check = try WearhouseRunner.run(["store", "check", "--store", url, "--json"])
        #expect((try WearhouseRunner.json(check.stdout)["samples"] as? [String: Int])?["heartRate"] == 25_000)
    }

    @Test func importStatsAndCheckAsOnSQLite() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try database()
        let first = try WearhouseRunner.run(["import-samples", "--store", url, "-"], stdin: StoreCommandTests.lines)
        #expect(
            first.stdout == "5 samples: 5 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n", "\(first.stderr)")
        // The environment names the store as well as --store does.
        var environment = ProcessInfo.processInfo.environment
        environment["WEARHOUSE_STORE"] = url
        let again = try TestSupport.runTool(
            WearhouseRunner.executable.path, ["import-samples", "-"], environment: environment,
            stdin: StoreCommandTests.lines)
        #expect(again.stdout == "5 samples: 0 inserted, 5 duplicate, 0 conflict, 0 replaced, 0 stale\n")
        _ = try WearhouseRunner.run(["import-samples", "--store", file, "-"], stdin: StoreCommandTests.lines)

        for arguments in [
            [
                "stats", "--type", "stepCount", "--interval", "1d", "--from", "2025-03-30", "--to", "2025-03-31",
                "--time-zone", "Europe/Berlin", "--json",
            ],
            ["stats", "--type", "heartRate", "--interval", "1h", "--from", "2025-03-30", "--to", "2025-03-31"],
            ["samples", "--type", "stepCount", "--format", "csv"],
        ] {
            let postgres = try WearhouseRunner.run(arguments + ["--store", url])
            let sqlite = try WearhouseRunner.run(arguments + ["--store", file])
            #expect(postgres.status == 0, "\(postgres.stderr)")
            // import-samples gives each line a new id: compare the rest.
            func withoutIDs(_ text: String) -> [String] {
                text.split(separator: "\n").map { $0.split(separator: ",", maxSplits: 1).last.map(String.init) ?? "" }
            }
            #expect(withoutIDs(postgres.stdout) == withoutIDs(sqlite.stdout))
        }
        let check = try WearhouseRunner.run(["store", "check", "--store", url])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("integrity  ok\n"))
        #expect(check.stdout.contains("samples    distanceWalkingRunning 1, heartRate 2, stepCount 2\n"))
        #expect(check.stdout.hasPrefix("store      postgresql://"))
    }

    @Test func anUnreachableServerIsUnavailableAndThePasswordStaysHidden() throws {
        let result = try WearhouseRunner.run([
            "samples", "--type", "heartRate", "--store",
            "postgresql://someone:secret@/x?host=/nonexistent&connect_timeout=2",
        ])
        #expect(result.status == 69)
        #expect(result.stderr.hasPrefix("Error: cannot open the store at postgresql://someone:***@"))
        #expect(!result.stderr.contains("secret"))
    }

    /// One gateway's samples as import-samples lines: its own strap's heart rate for its wearer, and the steps of a
    /// footpod every gateway hears (the same samples from every one of them).
    static func fleetLines(gateway: Int) -> [String] {
        var lines: [String] = []
        let start = 1_743_206_400  // 2025-03-29T00:00:00Z
        func time(_ second: Int) -> String { isoUTC(start + second) }
        for minute in 0..<300 {
            lines.append(
                #"{"type":"heartRate","start":"\#(time(minute * 60 + gateway))","value":\#(60 + (minute * 7 + gateway) % 90),"#
                    + #""source":"gateway-\#(gateway)","device":"strap-\#(gateway)","subject":"wearer-\#(gateway % 2)"}"#
            )
        }
        for minute in stride(from: gateway * 50, to: gateway * 50 + 400, by: 1) {
            lines.append(
                #"{"type":"stepCount","start":"\#(time(minute * 60))","end":"\#(time(minute * 60 + 60))","#
                    + #""value":\#(minute % 120),"source":"org.wearhouse.gateway","device":"footpod","subject":"wearer-0"}"#
            )
        }
        return lines
    }

    @Test func fourGatewayProcessesWritingAtOnceEndAsOneWritingInOrder() throws {
        let fleet = try database()
        let single = try database()
        let gateways = 0..<4
        // Each gateway imports its lines in ten batches, all four at once.
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: gateways.count) { gateway in
            let lines = Self.fleetLines(gateway: gateway)
            for batch in stride(from: 0, to: lines.count, by: 70) {
                let input = lines[batch..<min(batch + 70, lines.count)].joined(separator: "\n") + "\n"
                do {
                    let result = try WearhouseRunner.run(["import-samples", "--store", fleet, "-"], stdin: input)
                    if result.status != 0 { failures.withLock { $0.append(result.stderr) } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let all = gateways.flatMap { Self.fleetLines(gateway: $0) }.joined(separator: "\n") + "\n"
        #expect(try WearhouseRunner.run(["import-samples", "--store", single, "-"], stdin: all).status == 0)

        // No duplicates: 4 x 300 heart rates, and the footpod's 550 distinct minutes once each.
        let check = try WearhouseRunner.run(["store", "check", "--store", fleet])
        #expect(check.stdout.contains("samples    heartRate 1200, stepCount 550\n"), "\(check.stdout)")
        for arguments in [
            [
                "stats", "--type", "stepCount", "--interval", "1h", "--from", "2025-03-29", "--to", "2025-03-30",
                "--json",
            ],
            [
                "stats", "--type", "heartRate", "--interval", "1h", "--from", "2025-03-29", "--to", "2025-03-30",
                "--json", "--by-source",
            ],
            ["stats", "--type", "heartRate", "--interval", "1d", "--from", "2025-03-29", "--subject", "wearer-1"],
            ["samples", "--type", "heartRate", "--subject", "wearer-0", "--format", "csv"],
        ] {
            let together = try WearhouseRunner.run(arguments + ["--store", fleet])
            let inOrder = try WearhouseRunner.run(arguments + ["--store", single])
            #expect(together.status == 0, "\(together.stderr)")
            func withoutIDs(_ text: String) -> [String] {
                text.split(separator: "\n").map { $0.split(separator: ",", maxSplits: 1).last.map(String.init) ?? "" }
            }
            #expect(withoutIDs(together.stdout) == withoutIDs(inOrder.stdout))
        }
        // A coordinator's query across every gateway by subject: each sample keeps its gateway's source and device.
        let wearer = try WearhouseRunner.run([
            "samples", "--type", "heartRate", "--subject", "wearer-1", "--format", "csv", "--store", fleet,
        ])
        let rows = wearer.stdout.split(separator: "\n").dropFirst()
        #expect(rows.count == 600)
        #expect(
            Set(rows.map { $0.split(separator: ",", omittingEmptySubsequences: false)[6] }) == [
                "gateway-1", "gateway-3",
            ])
        #expect(
            Set(rows.map { $0.split(separator: ",", omittingEmptySubsequences: false)[8] }) == ["strap-1", "strap-3"])
    }

    /// One gateway's trace: the strap every gateway hears (the same notifications, over a window that overlaps the
    /// next gateway's) and its own wearer's strap, as `wearhouse run --record` writes them (no RR intervals:
    /// heartbeat series are cut from the start of each trace, so overlapping replays would cut them differently).
    static func fleetTrace(gateway: Int) -> String {
        let wallStart: Int64 = 1_795_946_400_000_000
        var lines = [
            #"{"wearhouse-trace":1,"created-us":\#(wallStart),"recorder":"wearhouse test","origin":"live"}"#
        ]
        let own = String(format: "C0:FF:EE:00:00:%02X", 0x10 + gateway)
        for (sensor, subject) in [("C0:FF:EE:00:00:01", "shared"), (own, "wearer-\(gateway)")] {
            lines.append(
                #"{"kind":"sensor","sensor":"\#(sensor)","subject":"\#(subject)","source":"wearhouse","#
                    + #""source-version":"test","time-zone":"UTC","characteristics":["2a37"],"mono-ns":0,"#
                    + #""wall-us":\#(wallStart)}"#)
        }
        func notification(_ sensor: String, second: Int, rate: Int) -> String {
            let mono = Int64(second) * 1_000_000_000 + 5_000_000
            let value = "00" + String(format: "%02x", rate)
            return #"{"kind":"notification","sensor":"\#(sensor)","uuid":"2a37","value":"\#(value)","#
                + #""mono-ns":\#(mono),"wall-us":\#(wallStart + mono / 1000)}"#
        }
        for second in (gateway * 100)..<(gateway * 100 + 300) {
            lines.append(notification("C0:FF:EE:00:00:01", second: second, rate: 60 + second % 80))
            if second < gateway * 100 + 200 {
                lines.append(notification(own, second: second, rate: 70 + (second * 3 + gateway) % 60))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func fourGatewaysReplayingOverlappingTracesAtOnceEndAsOneReplayingThemInOrder() throws {
        let fleet = try database()
        let single = try database()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let traces = try (0..<4).map { gateway in
            let path = folder.appendingPathComponent("gateway-\(gateway).trace").path
            try Self.fleetTrace(gateway: gateway).write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: traces.count) { index in
            do {
                let result = try WearhouseRunner.run(["replay", traces[index], "--store", fleet])
                if result.status != 0 { failures.withLock { $0.append(result.stderr) } }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        for trace in traces {
            #expect(try WearhouseRunner.run(["replay", trace, "--store", single]).status == 0)
        }
        // The shared strap's 600 distinct seconds once each, and every gateway's own 200.
        let check = try WearhouseRunner.run(["store", "check", "--store", fleet])
        #expect(check.stdout.contains("heartRate 1400"), "\(check.stdout)")
        for arguments in [
            ["stats", "--type", "heartRate", "--interval", "1h", "--json", "--by-source"],
            ["stats", "--type", "heartRate", "--interval", "5m", "--subject", "shared", "--statistic", "count,avg"],
            ["samples", "--type", "heartRate", "--format", "csv"],
        ] {
            let together = try WearhouseRunner.run(arguments + ["--store", fleet])
            let inOrder = try WearhouseRunner.run(arguments + ["--store", single])
            #expect(together.status == 0, "\(together.stderr)")
            #expect(together.stdout == inOrder.stdout)
        }
    }

    @Test func doctorOpensAndChecksAPostgreSQLStore() throws {
        let result = try WearhouseRunner.run(["doctor", "--json", "--store", try database()])
        let findings = try result.stdout.split(separator: "\n").map { try WearhouseRunner.json($0) }
        let store = findings.filter { $0["check"] as? String == "store" }
        #expect(store.map { $0["status"] as? String } == ["ok"], "\(result.stdout)")
    }
}

/// A role that may only SELECT opens a current store (no DDL on open) and runs the reading commands.
@Suite struct PostgresReadOnlyRoleTests {
    @Test func aSelectOnlyRoleRunsTheReadingCommands() throws {
        let server = try PostgresServer.shared()
        let conninfo = try server.createDatabase()
        let name = String(conninfo.split(separator: "=").last ?? "")
        let url = server.url(database: name)
        let imported = try WearhouseRunner.run(["import-samples", "--store", url, "-"], stdin: StoreCommandTests.lines)
        #expect(imported.status == 0, "\(imported.stderr)")
        let role = "reader_\(name.suffix(8))"
        try server.psql("CREATE ROLE \(role) LOGIN")
        try server.psql(
            "GRANT CONNECT ON DATABASE \(name) TO \(role); GRANT USAGE ON SCHEMA public TO \(role); "
                + "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)", database: name)
        let reader = url.replacingOccurrences(of: "postgresql://wearhouse@", with: "postgresql://\(role)@")
        for arguments in [
            ["stats", "--type", "stepCount", "--interval", "1d", "--from", "2025-03-30", "--to", "2025-03-31"],
            ["samples", "--type", "heartRate", "--format", "csv"], ["store", "check"], ["sensors"],
            ["export", "--format", "ndjson"], ["types"],
        ] {
            let owner = try WearhouseRunner.run(arguments + (arguments == ["types"] ? [] : ["--store", url]))
            let read = try WearhouseRunner.run(arguments + (arguments == ["types"] ? [] : ["--store", reader]))
            #expect(read.status == 0, "\(arguments): \(read.stderr)")
            // The database's size moves between the two runs (the server writes on its own): compare the rest.
            func withoutSize(_ text: String) -> String {
                text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("size ") }
                    .joined(separator: "\n")
            }
            #expect(
                withoutSize(read.stdout.replacingOccurrences(of: role, with: "wearhouse")) == withoutSize(owner.stdout),
                "\(arguments): \(read.stdout) vs \(owner.stdout)")
        }
        // The view, read by that role with psql: every sample (no device is NULL, not a dropped row), its unit.
        let psql = { (sql: String) in
            try WearhouseRunner.runTool(
                "/usr/bin/psql",
                [
                    server.conninfo(database: name).replacingOccurrences(of: "user=wearhouse", with: "user=\(role)"),
                    "-X", "-q", "-A", "-t", "-c", sql,
                ])
        }
        let counted = try psql("SELECT count(*), count(device), count(subject) FROM samples_v")
        #expect(counted.status == 0, "\(counted.stderr)")
        #expect(counted.stdout == "5|4|4\n")
        let distance = try psql(
            "SELECT type, unit, value, coalesce(device, 'none'), coalesce(subject, 'none'), "
                + "to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') FROM samples_v "
                + "WHERE type = 'distanceWalkingRunning'")
        #expect(distance.stdout == "distanceWalkingRunning|m|800|none|none|2025-03-30 08:00\n", "\(distance.stderr)")
        let heart = try psql("SELECT DISTINCT unit, metadata IS NULL FROM samples_v WHERE type = 'heartRate'")
        #expect(heart.stdout == "count/min|t\n", "\(heart.stderr)")
        // It cannot write.
        let write = try WearhouseRunner.run(["import-samples", "--store", reader, "-"], stdin: StoreCommandTests.lines)
        #expect(write.status != 0)
    }
}
