import Foundation

/// `export`: `wearhouse export` of a store of heart-rate samples to Open mHealth NDJSON and to CSV (into a file),
/// and `wearhouse samples --format csv` (to stdout, a file here), in samples per second, with peak resident memory;
/// then once from a store ten times as large, for memory alone. Peer in the same run: `sqlite3 -csv` of a row table
/// holding the same rows (the `import` scenario's Python peer's table).
enum ExportScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let count = size.pick(full: 1_000_000, quick: 200_000, smoke: 500)
        let memoryCount = size.pick(full: 10_000_000, quick: 1_000_000, smoke: 1_000)
        let runs = size.pick(full: 3, quick: 2, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-export-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wearhouse = try Peers.wearhouse
        let lines = directory.appendingPathComponent("samples.ndjson").path
        let rows = directory.appendingPathComponent("samples.csv").path
        try SampleFiles.write(count: count, ndjson: lines, csv: rows)
        let store = directory.appendingPathComponent("store.db").path
        _ = try Peers.measure(wearhouse, ["import-samples", lines, "--store", store])
        let sqlite = FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")
        let table = directory.appendingPathComponent("rows.db").path
        if sqlite {
            let script = directory.appendingPathComponent("import.sql").path
            try SampleFiles.sqliteImportScript(csv: rows).write(toFile: script, atomically: true, encoding: .utf8)
            _ = try Peers.measure("/usr/bin/sqlite3", [table], input: script)
        }
        let out = directory.appendingPathComponent("out").path
        var ndjson: [Double] = []
        var csv: [Double] = []
        var samples: [Double] = []
        var peer: [Double] = []
        var memory: [Double] = []
        for run in 0...runs {  // run 0 warms up
            let first = try Peers.measure(
                wearhouse, ["export", "--format", "ndjson", "--type", "heartRate", "--out", out, "--store", store])
            let second = try Peers.measure(
                wearhouse, ["export", "--format", "csv", "--type", "heartRate", "--out", out, "--store", store])
            let third = try Peers.measure(
                wearhouse, ["samples", "--type", "heartRate", "--format", "csv", "--store", store], output: out)
            let fourth =
                sqlite
                ? try Peers.measure("/usr/bin/sqlite3", ["-csv", table, "SELECT * FROM samples"], output: out) : nil
            if run > 0 {
                ndjson.append(Double(count) / first.seconds)
                csv.append(Double(count) / second.seconds)
                samples.append(Double(count) / third.seconds)
                if let fourth { peer.append(Double(count) / fourth.seconds) }
                memory.append(max(first.peakMegabytes, second.peakMegabytes, third.peakMegabytes))
            }
        }
        try SampleFiles.write(count: memoryCount, ndjson: lines, csv: nil)
        let large = directory.appendingPathComponent("large.db").path
        _ = try Peers.measure(wearhouse, ["import-samples", lines, "--store", large])
        try? FileManager.default.removeItem(atPath: lines)
        let big = try Peers.measure(
            wearhouse, ["export", "--format", "ndjson", "--type", "heartRate", "--out", out, "--store", large])

        var report = [
            BenchRow(subject: "wearhouse export --format ndjson", unit: "samples/s", runs: ndjson),
            BenchRow(subject: "wearhouse export --format csv", unit: "samples/s", runs: csv),
            BenchRow(subject: "wearhouse samples --format csv", unit: "samples/s", runs: samples),
        ]
        if sqlite { report.append(BenchRow(subject: "sqlite3 -csv of a row table", unit: "samples/s", runs: peer)) }
        report.append(BenchRow(subject: "wearhouse peak RSS, \(count) samples", unit: "MB", runs: memory))
        report.append(
            BenchRow(subject: "wearhouse peak RSS, ndjson of \(memoryCount)", unit: "MB", runs: [big.peakMegabytes]))
        report.append(
            BenchRow(
                subject: "wearhouse export rate, \(memoryCount) samples", unit: "samples/s",
                runs: [Double(memoryCount) / big.seconds]))
        return BenchReport(
            scenario: "export", size: size, rows: report,
            notes: [
                "\(count) heart-rate samples at 1 Hz from one source, imported by import-samples; out to a file",
                "wall time of each process from start to exit; peak RSS from /usr/bin/time (the ratio column compares rates only)",
                "targets: >= 2 M samples/s to NDJSON and CSV; flat memory (<= 64 MB) at any size",
            ])
    }
}
