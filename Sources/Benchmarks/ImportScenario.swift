import Foundation

/// `import`: `wearhouse import-samples` of flat JSON lines (one heart-rate sample a line, a day of 1 Hz after
/// another) into a fresh SQLite store, durable, in samples per second, with its peak resident memory; then once a
/// file ten times as large, for memory alone. Peers on the same rows in the same run: a Python script (json.loads,
/// executemany in batches of 1,000 into a row table, synchronous=FULL) and sqlite3's own `.import` of the same rows
/// as CSV (one transaction).
enum ImportScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let count = size.pick(full: 1_000_000, quick: 200_000, smoke: 500)
        let memoryCount = size.pick(full: 10_000_000, quick: 1_000_000, smoke: 1_000)
        let runs = size.pick(full: 3, quick: 2, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-import-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let wearhouse = try Peers.wearhouse
        let lines = directory.appendingPathComponent("samples.ndjson").path
        let rows = directory.appendingPathComponent("samples.csv").path
        try SampleFiles.write(count: count, ndjson: lines, csv: rows)

        var wearhouseRates: [Double] = []
        var wearhouseMemory: [Double] = []
        var pythonRates: [Double] = []
        var pythonMemory: [Double] = []
        var sqliteRates: [Double] = []
        var ratios: [Double] = []
        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
        let sqlite = FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")
        for run in 0...runs {  // run 0 warms up
            let store = directory.appendingPathComponent("wearhouse-\(run).db").path
            let ours = try Peers.measure(wearhouse, ["import-samples", lines, "--store", store])
            guard String(decoding: ours.output, as: UTF8.self).hasPrefix("\(count) samples: \(count) inserted") else {
                throw ReplayScenario.BenchError("import-samples: \(String(decoding: ours.output, as: UTF8.self))")
            }
            if python {
                let peer = try Peers.measure(
                    "/usr/bin/python3",
                    ["Benchmarks/peers/import_ndjson.py", lines, directory.appendingPathComponent("py-\(run).db").path])
                if run > 0 {
                    pythonRates.append(Double(count) / peer.seconds)
                    pythonMemory.append(peer.peakMegabytes)
                    ratios.append(peer.seconds / ours.seconds)
                }
            }
            if sqlite {
                let script = directory.appendingPathComponent("import.sql").path
                try SampleFiles.sqliteImportScript(csv: rows).write(toFile: script, atomically: true, encoding: .utf8)
                let peer = try Peers.measure(
                    "/usr/bin/sqlite3", [directory.appendingPathComponent("cli-\(run).db").path], input: script)
                if run > 0 { sqliteRates.append(Double(count) / peer.seconds) }
            }
            if run > 0 {
                wearhouseRates.append(Double(count) / ours.seconds)
                wearhouseMemory.append(ours.peakMegabytes)
            }
        }
        // Memory at ten times the size: one run, the file written and removed here.
        try SampleFiles.write(count: memoryCount, ndjson: lines, csv: nil)
        let large = try Peers.measure(
            wearhouse, ["import-samples", lines, "--store", directory.appendingPathComponent("large.db").path])

        var table = [BenchRow(subject: "wearhouse import-samples", unit: "samples/s", runs: wearhouseRates)]
        if python {
            table.append(BenchRow(subject: "python3 json + executemany", unit: "samples/s", runs: pythonRates))
        }
        if sqlite {
            table.append(BenchRow(subject: "sqlite3 .import of the rows as CSV", unit: "samples/s", runs: sqliteRates))
        }
        table.append(BenchRow(subject: "wearhouse peak RSS, \(count) lines", unit: "MB", runs: wearhouseMemory))
        table.append(
            BenchRow(subject: "wearhouse peak RSS, \(memoryCount) lines", unit: "MB", runs: [large.peakMegabytes]))
        table.append(
            BenchRow(
                subject: "wearhouse import rate, \(memoryCount) lines", unit: "samples/s",
                runs: [Double(memoryCount) / large.seconds]))
        if python {
            table.append(BenchRow(subject: "python3 peak RSS, \(count) lines", unit: "MB", runs: pythonMemory))
            table.append(BenchRow(subject: "wearhouse / python3, round by round", unit: "x", runs: ratios))
        }
        return BenchReport(
            scenario: "import", size: size, rows: table,
            notes: [
                "\(count) flat heart-rate lines (\(SampleFiles.lineExample)), a fresh store per run, WAL + synchronous=FULL for all",
                "wearhouse: the whole file in one transaction (all or nothing); python3: a commit per 1,000; sqlite3: one transaction, no validation",
                "wall time of each process from start to exit; peak RSS from /usr/bin/time; the RSS and x rows: see their unit (the ratio column compares rates only)",
                "targets: >= 1 M samples/s durable; <= 64 MB peak RSS at any size",
            ])
    }
}

/// The sample files the `import` and `export` scenarios share: heart rate at 1 Hz from one source, as flat JSON
/// lines and as CSV rows of the peers' row table.
enum SampleFiles {
    static let lineExample =
        #"{"type":"heartRate","start":"...Z","value":61,"unit":"count/min","source":"org.example.app"}"#
    static let start: Int64 = 1_743_292_800  // 2025-03-30T00:00:00Z, seconds

    static func write(count: Int, ndjson: String, csv: String?) throws {
        _ = FileManager.default.createFile(atPath: ndjson, contents: nil)
        let lines = try FileHandle(forWritingTo: URL(fileURLWithPath: ndjson))
        var rows: FileHandle?
        if let csv {
            _ = FileManager.default.createFile(atPath: csv, contents: nil)
            rows = try FileHandle(forWritingTo: URL(fileURLWithPath: csv))
        }
        var text = ""
        var table = ""
        for index in 0..<count {
            let second = start + Int64(index)
            let value = 55 + (index / 7) % 60
            text +=
                #"{"type":"heartRate","start":""# + iso(second)
                + #"","value":\#(value),"unit":"count/min","source":"org.example.app"}"# + "\n"
            if rows != nil {
                table += "heartRate,\(second * 1000),\(second * 1000),\(value),count/min,org.example.app\n"
            }
            if text.utf8.count > 1 << 20 {
                lines.write(Data(text.utf8))
                rows?.write(Data(table.utf8))
                text = ""
                table = ""
            }
        }
        lines.write(Data(text.utf8))
        rows?.write(Data(table.utf8))
        try lines.close()
        try rows?.close()
    }

    /// sqlite3's script for the CSV peer: the row table of the Python peer, filled by `.import`.
    static func sqliteImportScript(csv: String) -> String {
        """
        PRAGMA journal_mode=WAL;
        PRAGMA synchronous=FULL;
        CREATE TABLE samples (type TEXT, start_ms INTEGER, end_ms INTEGER, value REAL, unit TEXT, source TEXT);
        .import --csv \(csv) samples

        """
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch (days to a civil date, proleptic Gregorian).
    static func iso(_ seconds: Int64) -> String {
        let days = seconds / 86_400
        let inDay = Int(seconds % 86_400)
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(year)-\(two(Int(month)))-\(two(Int(day)))T\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60))Z"
    }
}
