import Foundation
import Health
import SQLiteStore

/// `query`: a daily statistics collection (avg/min/max heart rate) over a long 1 Hz series: a year
/// (31.5 million samples) in the full run, a week with `--quick`. Peer: a plain SQL GROUP BY over the same
/// samples in a row-per-sample table (a C program, same machine, same minute).
enum QueryScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let days = size.pick(full: 365, quick: 7, smoke: 1)
        let runs = size.pick(full: 5, quick: 3, smoke: 1)
        // Seconds between samples: 1 Hz, but 30 s at smoke size (a day's rollups filled, a thirtieth of the load).
        let step = size.pick(full: 1, quick: 1, smoke: 30)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-query-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let start: Int64 = 1_743_289_200_000
        let path = directory.appendingPathComponent("year.db").path
        let store = try SQLiteHealthStore(path: path)
        let clock = ContinuousClock()
        let loading = try await load(store, days: days, step: step, start: start)
        try await store.checkpoint()
        let samples = Double(days) * Double(86_400 / step)

        let buckets = try StatisticsBuckets(
            interval: StatisticsInterval(parsing: "1d"), anchor: .instant(Instant(milliseconds: start))
        )
        .buckets(from: Instant(milliseconds: start), to: Instant(milliseconds: start + Int64(days) * 86_400_000))
        let query = StatisticsQuery(type: .heartRate, buckets: buckets)
        var times: [Double] = []
        for run in 0...runs {
            let elapsed = try await clock.measure { _ = try await store.statistics(query, as: .owner) }
            if run > 0 { times.append(IngestScenario.seconds(elapsed) * 1000) }
        }
        var rows = [BenchRow(subject: "wearhouse daily collection (rollups)", unit: "ms", runs: times)]
        if let baseline = try Peers.compile("query_baseline", in: directory) {
            let output = try Peers.run(
                baseline.path, [directory.appendingPathComponent("plain.db").path, String(days), String(runs)])
            struct Output: Decodable { var seconds: [Double] }
            let result = try JSONDecoder().decode(Output.self, from: output)
            rows.append(
                BenchRow(
                    subject: "plain SQL GROUP BY, row per sample", unit: "ms", runs: result.seconds.map { $0 * 1000 }))
        }
        // DuckDB (PyPI `duckdb`) when the Python that runs the peers has it: a columnar engine, the usual pick for
        // aggregates like this one. Skipped (not an error) without it.
        let python = ProcessInfo.processInfo.environment["BENCH_PYTHON"] ?? "python3"
        if let output = try? Peers.run(
            "/usr/bin/env", [python, "Benchmarks/peers/query_duckdb.py", String(days), String(runs)])
        {
            struct Output: Decodable { var seconds: [Double] }
            if let result = try? JSONDecoder().decode(Output.self, from: output) {
                rows.append(
                    BenchRow(
                        subject: "DuckDB GROUP BY (python3 duckdb)", unit: "ms", runs: result.seconds.map { $0 * 1000 })
                )
            }
        }
        return BenchReport(
            scenario: "query", size: size, rows: rows,
            notes: [
                "\(days) days of heart rate, a sample every \(step) s (\(Int(samples)) samples), daily avg/min/max, "
                    + "\(runs) runs after a warm-up",
                String(
                    format: "loading the store took %.1f s (%.0f samples/s); store size %.2f bytes/sample",
                    IngestScenario.seconds(loading), samples / IngestScenario.seconds(loading),
                    Double(IngestScenario.fileBytes(path)) / samples),
                "target: the one-year daily collection in under 50 ms; lower is better (ratio: time relative to wearhouse)",
            ])
    }

    /// Fills `store` with `days` of heart rate, a sample every `step` seconds from `start` (ms), in batches of
    /// 10,000 (value 60 + (i / 7) % 50, as the peers generate it); returns how long it took.
    static func load(_ store: SQLiteHealthStore, days: Int, step: Int, start: Int64) async throws -> Duration {
        let source = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
        let device = Device(name: "Polar H10", localIdentifier: "A0:9E:1A:00:00:01")
        return try await ContinuousClock().measure {
            for day in 0..<days {
                var batch: [QuantitySample] = []
                batch.reserveCapacity(10_000)
                for second in stride(from: 0, to: 86_400, by: step) {
                    let index = Int64(day) * 86_400 + Int64(second)
                    let at = Instant(milliseconds: start + index * 1000)
                    batch.append(
                        QuantitySample(
                            type: .heartRate, start: at, end: at, value: Double(60 + (index / 7) % 50), source: source,
                            device: device, subject: "alice"))
                    if batch.count == 10_000 {
                        _ = try await store.save(batch, as: .owner)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !batch.isEmpty { _ = try await store.save(batch, as: .owner) }
            }
        }
    }
}
