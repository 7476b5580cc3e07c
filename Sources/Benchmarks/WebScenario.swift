import Foundation
import Health
import SQLiteStore
import WearhouseCLI

/// `web`: the server side of the Health app's heart-rate year chart (`/type/heartRate?range=year`: 53 weekly
/// min-max-average buckets from the rollups, the sources, the latest samples, the zones and the HRV, rendered to
/// HTML through the same gate and handler the server runs, without the socket) over a year of 1 Hz heart rate
/// (31.5 million samples) in the full run. Peer: the same weekly chart as a plain SQL GROUP BY over a
/// row-per-sample table (Benchmarks/peers/query_baseline.c, same machine, same run). Also the day page, whose
/// hourly buckets are under the rollups' two days and sweep the day's 86,400 samples.
enum WebScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let days = size.pick(full: 365, quick: 28, smoke: 7)
        let runs = size.pick(full: 7, quick: 3, smoke: 1)
        let step = size.pick(full: 1, quick: 1, smoke: 30)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-web-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let start: Int64 = 1_743_289_200_000
        let path = directory.appendingPathComponent("year.db").path
        let store = try SQLiteHealthStore(path: path)
        let loading = try await QueryScenario.load(store, days: days, step: step, start: start)
        try await store.checkpoint()
        let samples = Double(days) * Double(86_400 / step)
        // The last day with data, in UTC (the page's zone here): the year chart ends with it.
        let last = try StatisticsBuckets.localTime(
            at: Instant(milliseconds: start + Int64(days) * 86_400_000 - 1), in: .gmt)
        let date = String(last.description.prefix(10))

        let probe = await WebAppProbe(store: store, timeZone: .gmt)
        // The weeks of a zone an hour off UTC end an hour into a UTC day: each week reads 6 whole days from the day
        // rollups and a day's quarter hours at its ends.
        let berlin = await WebAppProbe(store: store, timeZone: TimeZone(identifier: "Europe/Berlin") ?? .gmt)
        let clock = ContinuousClock()
        var rows: [BenchRow] = []
        var pageBytes: [String: Int] = [:]
        for (range, subject, probe) in [
            ("year", "wearhouse web: heart-rate year chart page (rollups)", probe),
            ("year", "wearhouse web: the same page in Europe/Berlin (rollups)", berlin),
            ("day", "wearhouse web: heart-rate day chart page (the day's samples)", probe),
        ] {
            var times: [Double] = []
            for run in 0...runs {
                var answer = (status: 0, bytes: 0)
                let elapsed = await clock.measure {
                    answer = await probe.get("/type/heartRate", query: ["range": range, "date": date])
                }
                guard answer.status == 200 else {
                    throw BenchError("the \(range) page answered \(answer.status)")
                }
                pageBytes[range] = answer.bytes
                if run > 0 { times.append(IngestScenario.seconds(elapsed) * 1000) }
            }
            rows.append(BenchRow(subject: subject, unit: "ms", runs: times))
        }
        if let baseline = try Peers.compile("query_baseline", in: directory) {
            let output = try Peers.run(
                baseline.path, [directory.appendingPathComponent("plain.db").path, String(days), String(runs), "7"])
            struct Output: Decodable { var seconds: [Double] }
            let result = try JSONDecoder().decode(Output.self, from: output)
            rows.append(
                BenchRow(
                    subject: "plain SQL GROUP BY week, row per sample", unit: "ms",
                    runs: result.seconds.map { $0 * 1000 }))
        }
        return BenchReport(
            scenario: "web", size: size, rows: rows,
            notes: [
                "\(days) days of heart rate, a sample every \(step) s (\(Int(samples)) samples); the pages end on "
                    + "\(date) (UTC); \(runs) runs after a warm-up; pages of \(pageBytes["year"] ?? 0) and "
                    + "\(pageBytes["day"] ?? 0) bytes",
                String(
                    format: "loading the store took %.1f s (%.0f samples/s)", IngestScenario.seconds(loading),
                    samples / IngestScenario.seconds(loading)),
                "target: the year chart page's server time under 50 ms; lower is better (ratio: time relative to "
                    + "the year page)",
            ])
    }
}
