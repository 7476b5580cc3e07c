import Foundation

/// `export`: `wearhouse export` of a store of heart-rate samples to Open mHealth NDJSON (into a file with `--out`,
/// which is synced before it is renamed into place, and to stdout) and to CSV (`--out`), and `wearhouse samples
/// --format csv|json` (stdout), in samples per second and per CPU second, with peak resident memory; then once from
/// a store ten times as large, for memory. Peers in the same run: `sqlite3 -csv` of a row table holding the same rows
/// (the `import` scenario's Python peer's table), and `dd` writing as many bytes as the NDJSON export and syncing
/// them (what the disk allows a durable export of that size). Every process's stdout goes to a file; the file of the
/// process before is removed and `sync` run before each, so that none frees or waits for what another left.
enum ExportScenario {
    /// One measured command: what it is called in the table, its arguments, and whether its data is its stdout.
    struct Subject {
        var name: String
        /// The format, for the note on output sizes.
        var format: String
        var arguments: [String]
        var toStdout: Bool
    }

    static func run(size: BenchSize) async throws -> BenchReport {
        let count = size.pick(full: 1_000_000, quick: 200_000, smoke: 500)
        let memoryCount = size.pick(full: 10_000_000, quick: 1_000_000, smoke: 1_000)
        let runs = size.pick(full: 5, quick: 3, smoke: 1)
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
        let subjects = [
            Subject(
                name: "wearhouse export --format ndjson --out (synced)", format: "export ndjson",
                arguments: ["export", "--format", "ndjson", "--type", "heartRate", "--out", out, "--store", store],
                toStdout: false),
            Subject(
                name: "wearhouse export --format ndjson > file", format: "",
                arguments: ["export", "--format", "ndjson", "--type", "heartRate", "--store", store], toStdout: true),
            Subject(
                name: "wearhouse export --format csv --out (synced)", format: "export csv",
                arguments: ["export", "--format", "csv", "--type", "heartRate", "--out", out, "--store", store],
                toStdout: false),
            Subject(
                name: "wearhouse samples --format csv > file", format: "",
                arguments: ["samples", "--type", "heartRate", "--format", "csv", "--store", store], toStdout: true),
            Subject(
                name: "wearhouse samples --format json > file", format: "samples json",
                arguments: ["samples", "--type", "heartRate", "--format", "json", "--store", store], toStdout: true),
        ]
        var rates = Array(repeating: [Double](), count: subjects.count)
        var cpuRates = Array(repeating: [Double](), count: subjects.count)
        var bytes = Array(repeating: 0, count: subjects.count)
        var peer: [Double] = []
        var peerCPU: [Double] = []
        var ratios: [Double] = []
        var disk: [Double] = []
        var memory: [Double] = []
        for run in 0...runs {  // run 0 warms up
            var measured: [Peers.Measured] = []
            for (index, subject) in subjects.enumerated() {
                // Each command starts without the file of the one before (which an --out export renamed over it
                // would free, discarding its blocks, inside the measured time) and without its dirty pages (which
                // the kernel would be writing out while a synced export waits for the disk).
                try? FileManager.default.removeItem(atPath: out)
                sync()
                let result = try Peers.measure(wearhouse, subject.arguments, output: subject.toStdout ? out : nil)
                bytes[index] = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
                measured.append(result)
            }
            try? FileManager.default.removeItem(atPath: out)
            sync()
            let rowTable =
                sqlite
                ? try Peers.measure("/usr/bin/sqlite3", ["-csv", table, "SELECT * FROM samples"], output: out) : nil
            // The disk's own rate for a durable file as large as the NDJSON export.
            let blocks = max(1, bytes[0] >> 23)
            try? FileManager.default.removeItem(atPath: out)
            sync()
            let synced = try Peers.measure(
                "/usr/bin/dd",
                ["if=/dev/zero", "of=\(out)", "bs=8M", "count=\(blocks)", "conv=fdatasync", "status=none"])
            guard run > 0 else { continue }
            for (index, result) in measured.enumerated() {
                rates[index].append(Double(count) / result.seconds)
                cpuRates[index].append(result.cpuSeconds > 0 ? Double(count) / result.cpuSeconds : 0)
            }
            memory.append(measured.map(\.peakMegabytes).max() ?? 0)
            if let rowTable {
                peer.append(Double(count) / rowTable.seconds)
                peerCPU.append(rowTable.cpuSeconds > 0 ? Double(count) / rowTable.cpuSeconds : 0)
                ratios.append(rowTable.seconds / measured[3].seconds)
            }
            disk.append(Double(count) * Double(blocks << 23) / Double(max(bytes[0], 1)) / synced.seconds)
        }
        try? FileManager.default.removeItem(atPath: out)
        try SampleFiles.write(count: memoryCount, ndjson: lines, csv: nil)
        let large = directory.appendingPathComponent("large.db").path
        _ = try Peers.measure(wearhouse, ["import-samples", lines, "--store", large])
        try? FileManager.default.removeItem(atPath: lines)
        sync()
        let bigNDJSON = try Peers.measure(
            wearhouse, ["export", "--format", "ndjson", "--type", "heartRate", "--out", out, "--store", large])
        try? FileManager.default.removeItem(atPath: out)
        sync()
        let bigCSV = try Peers.measure(
            wearhouse, ["samples", "--type", "heartRate", "--format", "csv", "--store", large], output: out)
        try? FileManager.default.removeItem(atPath: out)

        // The peer first: the ratio column is then each rate against it.
        var report: [BenchRow] = []
        if sqlite {
            report.append(BenchRow(subject: "sqlite3 -csv of a row table > file", unit: "samples/s", runs: peer))
        }
        for (index, subject) in subjects.enumerated() {
            report.append(BenchRow(subject: subject.name, unit: "samples/s", runs: rates[index]))
        }
        report.append(
            BenchRow(subject: "dd of as many bytes as the NDJSON, fdatasync (the disk)", unit: "samples/s", runs: disk))
        report.append(
            BenchRow(subject: "wearhouse samples --format csv, per CPU second", unit: "samples/s", runs: cpuRates[3]))
        report.append(
            BenchRow(
                subject: "wearhouse export --format ndjson > file, per CPU second", unit: "samples/s", runs: cpuRates[1]
            ))
        if sqlite {
            report.append(BenchRow(subject: "sqlite3 -csv, per CPU second", unit: "samples/s", runs: peerCPU))
            report.append(
                BenchRow(subject: "wearhouse samples csv / sqlite3 -csv, round by round", unit: "x", runs: ratios))
        }
        report.append(BenchRow(subject: "wearhouse peak RSS, \(count) samples", unit: "MB", runs: memory))
        report.append(
            BenchRow(
                subject: "wearhouse peak RSS, export ndjson --out of \(memoryCount)", unit: "MB",
                runs: [bigNDJSON.peakMegabytes]))
        report.append(
            BenchRow(
                subject: "wearhouse peak RSS, samples csv of \(memoryCount)", unit: "MB", runs: [bigCSV.peakMegabytes]))
        report.append(
            BenchRow(
                subject: "wearhouse export ndjson --out, \(memoryCount) samples", unit: "samples/s",
                runs: [Double(memoryCount) / bigNDJSON.seconds]))
        report.append(
            BenchRow(
                subject: "wearhouse samples csv, \(memoryCount) samples", unit: "samples/s",
                runs: [Double(memoryCount) / bigCSV.seconds]))
        let sizes = zip(subjects, bytes).filter { !$0.0.format.isEmpty }.map { "\($0.format) \($1 / max(count, 1)) B" }
        return BenchReport(
            scenario: "export", size: size, rows: report,
            notes: [
                "\(count) heart-rate samples at 1 Hz from one source, imported by import-samples (dense series); every output to a file on the same disk",
                "bytes a sample: \(sizes.joined(separator: ", "))",
                "wall time of each process from start to exit; CPU = user + system (/usr/bin/time), which other load on the machine does not change; peak RSS from /usr/bin/time (the ratio column compares rates only)",
                "targets: >= 2 M samples/s to NDJSON and CSV; flat memory (<= 64 MB) at any size",
            ])
    }
}
