import Foundation
import Health
@_spi(Benchmarks) import PostgresStore
import TestSupport

/// `postgres`: the PostgreSQL engine on a throwaway server of its own (durable: fsync on, as shipped).
///
/// Ingest: heart-rate samples per second through `save` (COPY into the staging table, then one INSERT ... SELECT
/// ... ON CONFLICT DO NOTHING; and the same with array parameters instead of COPY), in batches of 10,000 and in
/// the gateway's batches of 500, and a replay of the same samples (all duplicates); the peer is a plain COPY of
/// the same rows into a table made like `samples`, in the same batches, side by side. Query: the daily statistics
/// collection over a year, from the rollups.
enum PostgresScenario {
    static func run(size: BenchSize) async throws -> BenchReport {
        let count = size.pick(full: 200_000, quick: 20_000, smoke: 1_000)
        let runs = size.pick(full: 5, quick: 3, smoke: 1)
        let server = try PostgresServer.start(durable: true)
        defer { server.stop() }
        let start: Int64 = 1_743_289_200_000
        let source = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
        let device = Device(
            name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", localIdentifier: "A0:9E:1A:00:00:01")
        let metadata: [String: MetadataValue] = [MetadataKey.heartRateSensorLocation: .number(1)]
        let samples = (0..<count).map { (index: Int) -> QuantitySample in
            let at = Instant(milliseconds: start + Int64(index) * 1000)
            let value = 60 + Double((index / 7) % 50)
            return QuantitySample(
                type: .heartRate, start: at, end: at, value: value, source: source, device: device, subject: "alice",
                metadata: metadata)
        }
        let clock = ContinuousClock()

        /// Rates of `write` over fresh databases, the first run a warm-up.
        func rates(_ write: (PostgresHealthStore, ArraySlice<QuantitySample>) async throws -> Void, batch: Int)
            async throws -> [Double]
        {
            var rates: [Double] = []
            for run in 0...runs {
                let store = try PostgresHealthStore(url: try server.createDatabase())
                let elapsed = try await clock.measure {
                    for first in stride(from: 0, to: samples.count, by: batch) {
                        try await write(store, samples[first..<min(first + batch, samples.count)])
                    }
                }
                if run > 0 { rates.append(Double(count) / IngestScenario.seconds(elapsed)) }
            }
            return rates
        }
        let copy = try await rates({ _ = try await $0.save(Array($1), as: .owner) }, batch: 10_000)
        let plain = try await rates({ try await $0.plainCopy(Array($1)) }, batch: 10_000)
        let arrays = try await rates(
            {
                await $0.setBulkMethod(.arrays)
                _ = try await $0.save(Array($1), as: .owner)
            }, batch: 10_000)
        let gateway = try await rates({ _ = try await $0.save(Array($1), as: .owner) }, batch: 500)
        let plainGateway = try await rates({ try await $0.plainCopy(Array($1)) }, batch: 500)
        // A replay: everything written again reports duplicates.
        var replay: [Double] = []
        let replayed = try PostgresHealthStore(url: try server.createDatabase())
        for first in stride(from: 0, to: count, by: 10_000) {
            _ = try await replayed.save(Array(samples[first..<min(first + 10_000, count)]), as: .owner)
        }
        for _ in 0..<runs {
            let elapsed = try await clock.measure {
                for first in stride(from: 0, to: count, by: 10_000) {
                    _ = try await replayed.save(Array(samples[first..<min(first + 10_000, count)]), as: .owner)
                }
            }
            replay.append(Double(count) / IngestScenario.seconds(elapsed))
        }

        // The yearly daily collection: a sample every 10 s for a year fills every quarter hour's rollup, as 1 Hz
        // would (the query reads the rollups only), in a tenth of the loading time.
        let days = size.pick(full: 365, quick: 7, smoke: 1)
        let year = try PostgresHealthStore(url: try server.createDatabase())
        let loading = try await clock.measure {
            var batch: [QuantitySample] = []
            batch.reserveCapacity(10_000)
            for index in 0..<Int64(days) * 8_640 {
                let at = Instant(milliseconds: start + index * 10_000)
                batch.append(
                    QuantitySample(
                        type: .heartRate, start: at, end: at, value: Double(60 + (index / 7) % 50), source: source,
                        device: device, subject: "alice"))
                if batch.count == 10_000 {
                    _ = try await year.save(batch, as: .owner)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { _ = try await year.save(batch, as: .owner) }
        }
        let buckets = try StatisticsBuckets(
            interval: StatisticsInterval(parsing: "1d"), anchor: .instant(Instant(milliseconds: start))
        )
        .buckets(from: Instant(milliseconds: start), to: Instant(milliseconds: start + Int64(days) * 86_400_000))
        let query = StatisticsQuery(type: .heartRate, buckets: buckets)
        var times: [Double] = []
        for run in 0...runs {
            let elapsed = try await clock.measure { _ = try await year.statistics(query, as: .owner) }
            if run > 0 { times.append(IngestScenario.seconds(elapsed) * 1000) }
        }
        return BenchReport(
            scenario: "postgres", size: size,
            rows: [
                BenchRow(subject: "wearhouse save, COPY staging, batches of 10,000", unit: "samples/s", runs: copy),
                BenchRow(subject: "plain COPY of the same rows, batches of 10,000", unit: "samples/s", runs: plain),
                BenchRow(
                    subject: "wearhouse save, array parameters, batches of 10,000", unit: "samples/s", runs: arrays),
                BenchRow(subject: "wearhouse save, COPY staging, batches of 500", unit: "samples/s", runs: gateway),
                BenchRow(subject: "plain COPY of the same rows, batches of 500", unit: "samples/s", runs: plainGateway),
                BenchRow(
                    subject: "wearhouse replay (all duplicates), batches of 10,000", unit: "samples/s", runs: replay),
                BenchRow(subject: "yearly daily collection (rollups), \(days) days", unit: "ms", runs: times),
            ],
            notes: [
                "\(count) samples of 1 Hz heart rate per run, each run into a fresh database; durable commits",
                String(
                    format: "loading %d days (a sample every 10 s) took %.1f s", days, IngestScenario.seconds(loading)),
                "targets: save at least half the plain COPY rate; the yearly daily collection under 100 ms",
            ])
    }
}
