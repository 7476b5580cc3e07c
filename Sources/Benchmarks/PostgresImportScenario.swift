import Foundation
import TestSupport

/// `postgres-import`: `wearhouse import-samples` of the `import` scenario's flat heart-rate lines into a fresh
/// PostgreSQL database (a throwaway server of the scenario's own, durable: fsync and synchronous commit on), beside
/// the same import into a fresh SQLite store, `psql`'s `\copy` of the same rows as CSV into a row table with no
/// index (one transaction: PostgreSQL's own bulk load, as `sqlite3 .import` is SQLite's), and `psql`'s `\copy` of
/// the very rows the import wrote (binary) into a table made like `samples`, its indexes included; then `wearhouse
/// export` (NDJSON and CSV to stdout, NDJSON `--out`, synced) and `samples --format csv|json` of the database, beside
/// `psql`'s `\copy` of the row table out as CSV (not synced), each output to a file removed and synced before, the
/// ratio to psql taken round by round. Every program runs as its own process, its wall time from start to exit.
enum PostgresImportScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let count = size.pick(full: 1_000_000, quick: 200_000, smoke: 500)
        let runs = size.pick(full: 3, quick: 2, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-postgres-import-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wearhouse = try Peers.wearhouse
        let lines = directory.appendingPathComponent("samples.ndjson").path
        let rows = directory.appendingPathComponent("samples.csv").path
        try SampleFiles.write(count: count, ndjson: lines, csv: rows)
        let server = try PostgresServer.start(durable: true)
        defer { server.stop() }

        var postgresRates: [Double] = []
        var postgresMemory: [Double] = []
        var sqliteRates: [Double] = []
        var copyRates: [Double] = []
        var sameRowRates: [Double] = []
        var ratios: [Double] = []
        var sameRowRatios: [Double] = []
        var database = ""
        var table = ""
        for run in 0...runs {  // run 0 warms up
            let location = try server.createDatabase()
            database = String(location.split(separator: "=").last ?? "")
            let ours = try Peers.measure(
                wearhouse, ["import-samples", lines, "--store", server.url(database: database)])
            guard String(decoding: ours.output, as: UTF8.self).hasPrefix("\(count) samples: \(count) inserted") else {
                throw ReplayScenario.BenchError("import-samples: \(String(decoding: ours.output, as: UTF8.self))")
            }
            // The rows the import wrote, COPYed again by psql into a table made like `samples` (its indexes too).
            let dump = directory.appendingPathComponent("rows.bin").path
            let columns =
                "type_id, start_ms, end_ms, source_id, device_id, subject_id, uuid, start_offset_s, value, "
                + "writer, seq, metadata"
            _ = try Peers.measure(
                "/usr/bin/psql",
                [
                    location, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                    "\\copy (SELECT \(columns) FROM samples ORDER BY seq) TO '\(dump)' WITH (FORMAT binary)",
                ])
            let sameRows = try Peers.measure(
                "/usr/bin/psql",
                [
                    location, "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-c",
                    "CREATE TABLE plain_samples (LIKE samples INCLUDING ALL)", "-c",
                    "\\copy plain_samples (\(columns)) FROM '\(dump)' WITH (FORMAT binary)",
                ])
            try? FileManager.default.removeItem(atPath: dump)
            let store = directory.appendingPathComponent("sqlite-\(run).db").path
            let sqlite = try Peers.measure(wearhouse, ["import-samples", lines, "--store", store])
            try? FileManager.default.removeItem(atPath: store)
            let copyLocation = try server.createDatabase()
            table = String(copyLocation.split(separator: "=").last ?? "")
            let copy = try Peers.measure(
                "/usr/bin/psql",
                [
                    server.conninfo(database: table), "-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-c",
                    "CREATE TABLE samples (type text, start_ms bigint, end_ms bigint, value double precision, "
                        + "unit text, source text)",
                    "-c", "\\copy samples FROM '\(rows)' WITH (FORMAT csv)",
                ])
            if run > 0 {
                postgresRates.append(Double(count) / ours.seconds)
                postgresMemory.append(ours.peakMegabytes)
                sqliteRates.append(Double(count) / sqlite.seconds)
                copyRates.append(Double(count) / copy.seconds)
                sameRowRates.append(Double(count) / sameRows.seconds)
                ratios.append(copy.seconds / ours.seconds)
                sameRowRatios.append(sameRows.seconds / ours.seconds)
            }
            if run < runs {
                _ = try server.psql("DROP DATABASE \(database) WITH (FORCE)")
                _ = try server.psql("DROP DATABASE \(table) WITH (FORCE)")
            }
        }

        // Export from the last run's database, and its row table out through psql.
        let url = server.url(database: database)
        let out = directory.appendingPathComponent("out").path
        var ndjson: [Double] = []
        var csv: [Double] = []
        var samples: [Double] = []
        var samplesJSON: [Double] = []
        var syncedNDJSON: [Double] = []
        var peer: [Double] = []
        var exportRatios: [[Double]] = [[], [], [], []]
        var exportMemory: [Double] = []
        for run in 0...runs {
            // Each output goes to the same file, removed and synced before each program (as in the `export`
            // scenario), so that none frees or waits for what another left.
            func measure(_ executable: String, _ arguments: [String], output: String? = nil) throws -> Peers.Measured {
                try? FileManager.default.removeItem(atPath: out)
                sync()
                return try Peers.measure(executable, arguments, output: output)
            }
            let first = try measure(
                wearhouse, ["export", "--format", "ndjson", "--type", "heartRate", "--store", url], output: out)
            let second = try measure(
                wearhouse, ["export", "--format", "csv", "--type", "heartRate", "--store", url], output: out)
            let third = try measure(
                wearhouse, ["samples", "--type", "heartRate", "--format", "csv", "--store", url], output: out)
            let fourth = try measure(
                wearhouse, ["samples", "--type", "heartRate", "--format", "json", "--store", url], output: out)
            let synced = try measure(
                wearhouse, ["export", "--format", "ndjson", "--type", "heartRate", "--out", out, "--store", url])
            let psql = try measure(
                "/usr/bin/psql",
                [
                    server.conninfo(database: table), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                    "\\copy (SELECT * FROM samples ORDER BY start_ms) TO '\(out)' WITH (FORMAT csv)",
                ])
            if run > 0 {
                ndjson.append(Double(count) / first.seconds)
                csv.append(Double(count) / second.seconds)
                samples.append(Double(count) / third.seconds)
                samplesJSON.append(Double(count) / fourth.seconds)
                syncedNDJSON.append(Double(count) / synced.seconds)
                peer.append(Double(count) / psql.seconds)
                for (index, ours) in [first, second, third, fourth].enumerated() {
                    exportRatios[index].append(psql.seconds / ours.seconds)
                }
                exportMemory.append(
                    [first, second, third, fourth, synced].map(\.peakMegabytes).max() ?? 0)
            }
        }
        return BenchReport(
            scenario: "postgres-import", size: size,
            rows: [
                BenchRow(subject: "wearhouse import-samples into PostgreSQL", unit: "samples/s", runs: postgresRates),
                BenchRow(subject: "psql \\copy of the rows as CSV (row table)", unit: "samples/s", runs: copyRates),
                BenchRow(
                    subject: "psql \\copy of the rows wearhouse wrote (binary, samples' indexes)", unit: "samples/s",
                    runs: sameRowRates),
                BenchRow(subject: "wearhouse import-samples into SQLite", unit: "samples/s", runs: sqliteRates),
                BenchRow(subject: "wearhouse / psql \\copy (row table), round by round", unit: "x", runs: ratios),
                BenchRow(
                    subject: "wearhouse / psql \\copy (samples' indexes), round by round", unit: "x",
                    runs: sameRowRatios),
                BenchRow(subject: "wearhouse peak RSS, import into PostgreSQL", unit: "MB", runs: postgresMemory),
                BenchRow(
                    subject: "wearhouse export --format ndjson > file from PostgreSQL", unit: "samples/s",
                    runs: ndjson),
                BenchRow(
                    subject: "wearhouse export --format csv > file from PostgreSQL", unit: "samples/s", runs: csv),
                BenchRow(
                    subject: "wearhouse samples --format csv from PostgreSQL", unit: "samples/s",
                    runs: samples),
                BenchRow(
                    subject: "wearhouse samples --format json from PostgreSQL", unit: "samples/s",
                    runs: samplesJSON),
                BenchRow(
                    subject: "wearhouse export --format ndjson --out (synced) from PostgreSQL", unit: "samples/s",
                    runs: syncedNDJSON),
                BenchRow(subject: "psql \\copy of the row table to CSV", unit: "samples/s", runs: peer),
                BenchRow(
                    subject: "export ndjson / psql \\copy out, round by round", unit: "x", runs: exportRatios[0]),
                BenchRow(subject: "export csv / psql \\copy out, round by round", unit: "x", runs: exportRatios[1]),
                BenchRow(
                    subject: "samples csv / psql \\copy out, round by round", unit: "x", runs: exportRatios[2]),
                BenchRow(
                    subject: "samples json / psql \\copy out, round by round", unit: "x", runs: exportRatios[3]),
                BenchRow(subject: "wearhouse peak RSS, export from PostgreSQL", unit: "MB", runs: exportMemory),
            ],
            notes: [
                "\(count) flat heart-rate lines (\(SampleFiles.lineExample)), a fresh database (or SQLite file) per run",
                "PostgreSQL: a server of the scenario's own on a Unix socket, durable (fsync, synchronous commit); "
                    + "wearhouse: the whole file in one transaction (all or nothing); psql: CREATE TABLE and \\copy "
                    + "in one transaction, no index, no validation",
                "wall time of each process from start to exit; peak RSS from /usr/bin/time; the RSS and x rows: see "
                    + "their unit (the ratio column compares rates only)",
            ])
    }
}
