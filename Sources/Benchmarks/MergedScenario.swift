import Foundation
import Health
@_spi(Benchmarks) import PostgresStore
import SQLiteStore
import TestSupport

/// `merged`: a year of daily merged step totals from two sources (a footpod through the gateway and a watch app,
/// one-minute samples through most of each day, overlapping and half a minute apart), merged and by source, on
/// both engines: a SQLite file, and a database on a throwaway PostgreSQL server of the scenario's own (durable, as
/// the `postgres` scenario's). Each store answers from its quarter-hour cumulative rollups; the peer is the same
/// store's raw sweep through the merge (`exact`), run side by side on the same data, and both must give the same
/// totals.
enum MergedScenario {
    static let gateway = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
    static let watch = Source(identifier: "com.example.watch")
    static let footpod = Device(name: "Stryd", localIdentifier: "F0:0D:00:00:00:01")
    static let wrist = Device(name: "Watch", localIdentifier: "C7:00:00:00:00:02")

    static func run(size: BenchSize) async throws -> BenchReport {
        let days = size.pick(full: 365, quick: 28, smoke: 2)
        let runs = size.pick(full: 5, quick: 3, smoke: 1)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-merged-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let start: Int64 = 1_743_289_200_000  // 2025-03-30T00:00Z
        let path = directory.appendingPathComponent("steps.db").path
        let store = try SQLiteHealthStore(path: path)
        let (loading, samples) = try await load(store, days: days, start: start)
        try await store.checkpoint()
        let server = try PostgresServer.start(durable: true)
        defer { server.stop() }
        let postgres = try PostgresHealthStore(url: try server.createDatabase())
        let (postgresLoading, _) = try await load(postgres, days: days, start: start)
        try await postgres.vacuumAnalyze()

        let buckets = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1d"), timeZoneIdentifier: "UTC")
            .buckets(from: Instant(milliseconds: start), to: Instant(milliseconds: start + Int64(days) * 86_400_000))
        let clock = ContinuousClock()
        var rows: [BenchRow] = []
        let engines: [(String, any HealthStore)] = [("", store), (", PostgreSQL", postgres)]
        for (engine, store) in engines {
            // The footpod counts first, the watch fills what it missed.
            try await store.setPriority(
                of: .stepCount,
                SourcePriority(order: [Provenance(source: gateway.identifier, device: Provenance.anyDevice)]))
            var answers: [String: [StatisticsResult]] = [:]
            let cases: [(String, Bool, Bool)] = [
                ("wearhouse merged daily totals (rollups)\(engine)", false, false),
                ("wearhouse by-source daily totals (rollups)\(engine)", true, false),
                ("raw sweep through the merge (exact)\(engine)", false, true),
                ("raw sweep by source (exact)\(engine)", true, true),
            ]
            for (subject, separate, exact) in cases {
                let query = StatisticsQuery(
                    type: .stepCount, buckets: buckets, separateBySource: separate, exact: exact)
                var times: [Double] = []
                for run in 0...runs {
                    var answer: [StatisticsResult] = []
                    let elapsed = try await clock.measure { answer = try await store.statistics(query, as: .owner) }
                    if run > 0 { times.append(IngestScenario.seconds(elapsed) * 1000) }
                    answers[subject] = answer
                }
                rows.append(BenchRow(subject: subject, unit: "ms", runs: times))
            }
            try check(answers[cases[0].0], answers[cases[2].0], "merged\(engine)")
            try check(answers[cases[1].0], answers[cases[3].0], "by source\(engine)")
        }
        let quarters = await store.cumulativeQuarters
        let postgresQuarters = await postgres.cumulativeQuarters
        return BenchReport(
            scenario: "merged", size: size, rows: rows,
            notes: [
                "\(days) days of steps from two sources, \(samples) one-minute samples, daily totals merged under a "
                    + "priority and by source, \(runs) runs after a warm-up; the rollup answers equal the sweep's",
                String(
                    format: "loading the store took %.1f s (%.0f samples/s); %d quarter hours from rollups, %d swept",
                    IngestScenario.seconds(loading), Double(samples) / IngestScenario.seconds(loading),
                    quarters.fromRollups, quarters.swept),
                String(
                    format: "PostgreSQL (durable, its own server): loading took %.1f s (%.0f samples/s); %d quarter "
                        + "hours from rollups, %d swept",
                    IngestScenario.seconds(postgresLoading), Double(samples) / IngestScenario.seconds(postgresLoading),
                    postgresQuarters.fromRollups, postgresQuarters.swept),
                "target: a year of daily merged totals in under 20 ms, also by source; lower is better "
                    + "(ratio: time relative to the merged rollups)",
            ])
    }

    /// The same buckets, sums (to a millionth) and sources, or an error naming the first difference.
    static func check(_ fast: [StatisticsResult]?, _ exact: [StatisticsResult]?, _ what: String) throws {
        guard let fast, let exact, fast.count == exact.count else {
            throw ReplayScenario.BenchError("merged: the \(what) answers differ in length")
        }
        for (a, b) in zip(fast, exact) {
            let sums =
                switch (a.sum, b.sum) {
                case (nil, nil): true
                case (let x?, let y?): abs(x - y) <= 1e-6 * max(1, abs(x), abs(y))
                default: false
                }
            guard sums, a.bucket == b.bucket, a.provenance == b.provenance, Set(a.sources) == Set(b.sources) else {
                throw ReplayScenario.BenchError("merged: \(what): the rollups give \(a), the sweep \(b)")
            }
        }
    }

    /// Fills `store` with `days` of steps: the footpod's minutes from 00:00 to 23:30, the watch's from 00:30 to
    /// 24:00 starting 30 s later, each a day's batch; returns how long it took and how many samples it wrote.
    static func load(_ store: any HealthStore, days: Int, start: Int64) async throws -> (Duration, Int) {
        var count = 0
        let elapsed = try await ContinuousClock().measure {
            for day in 0..<days {
                let midnight = start + Int64(day) * 86_400_000
                for (source, device, first, offset) in [(gateway, footpod, 0, 0), (watch, wrist, 30, 30_000)] {
                    let batch = (first..<(first + 1_410)).map { minute in
                        let at = midnight + Int64(minute) * 60_000 + Int64(offset)
                        return QuantitySample(
                            type: .stepCount, start: Instant(milliseconds: at), end: Instant(milliseconds: at + 60_000),
                            value: Double((minute * 37 + day) % 120), source: source, device: device)
                    }
                    _ = try await store.save(batch, as: .owner)
                    count += batch.count
                }
            }
        }
        return (elapsed, count)
    }
}
