import Foundation
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
}
