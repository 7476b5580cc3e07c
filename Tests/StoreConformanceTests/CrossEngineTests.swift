import Foundation
import Health
import StoreEngine
import Support
import TestSupport
import Testing

/// The same writes into both engines give the same answers: write outcomes, query results, statistics (to within
/// the tolerance of `docs/store-semantics.md`, item 12) and merge winners.
@Suite struct CrossEngineTests {
    static let gateway = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
    static let logger = Source(identifier: "com.example.logger")
    static let strap = Device(
        name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", localIdentifier: "A0:01")
    static let watch = Device(name: "PineTime", manufacturer: "Pine64", model: "PineTime", localIdentifier: "C7:02")
    static let footpod = Device(name: "Stryd", manufacturer: "Stryd", model: "Footpod", serialNumber: "S-77")
    /// 2025-03-29T00:00Z: the three days span Berlin's switch to summer time.
    static let day0: Int64 = 1_743_206_400

    /// Writes, as the gateway and an app would over three days, in batches; returns every batch's outcomes.
    private func writeEverything(to store: any HealthStoreEngine) async throws -> [[WriteOutcome]] {
        var random = SplitMix64(seed: 0x5EED_CAFE)
        var outcomes: [[WriteOutcome]] = []
        try await store.setAuthorization(
            app: Self.logger.identifier,
            [
                TypeAuthorization(type: "stepCount", read: false, share: true),
                TypeAuthorization(type: "heartRate", read: true, share: true),
            ])
        try await store.setPriority(
            of: .stepCount,
            [
                Provenance(source: Self.gateway.identifier, device: Self.footpod.key),
                Provenance(source: Self.gateway.identifier, device: Self.watch.key),
            ])

        // Heart rate: the strap every 10 s, the watch every 30 s, worn by two people; replays and conflicts.
        var heartRates: [QuantitySample] = []
        for second in stride(from: Int64(0), to: 3 * 86_400, by: 10) {
            let subject = second % 86_400 < 43_200 ? "alice" : "bob"
            let bpm = Double(50 + Int(random.next() % 130)) + (second % 40 == 0 ? 0.5 : 0)
            heartRates.append(sample(.heartRate, second, second, bpm, device: Self.strap, subject: subject))
            if second % 30 == 0 {
                let wrist = Double(55 + Int(random.next() % 110))
                heartRates.append(
                    sample(.heartRate, second + 5, second + 5, wrist, device: Self.watch, subject: "alice"))
            }
        }
        var position = 0
        while position < heartRates.count {
            let size = 1 + Int(random.next() % 900)
            var batch = Array(heartRates[position..<min(position + size, heartRates.count)])
            if random.next() % 4 == 0, position > 0 {
                // A replay of some earlier samples, one of them with another value.
                var replay = Array(heartRates[max(0, position - 50)..<position])
                replay[replay.count / 2].value += 1
                batch = replay + batch
            }
            outcomes.append(try await store.save(batch, as: .owner))
            position += size
        }
        // An app's own readings (rows in SQLite), one of them at a strap reading's key but from another source.
        let appReadings = (0..<40).map {
            sample(.heartRate, Int64($0) * 6_000 + 3, Int64($0) * 6_000 + 3, 77, source: Self.logger, device: nil)
        }
        outcomes.append(try await store.save(appReadings, as: .app(Self.logger.identifier)))

        // Steps: the footpod counts minutes, the watch counts uneven stretches that overlap them, the app logs
        // walks with client ids and versions.
        var steps: [QuantitySample] = []
        for minute in stride(from: Int64(0), to: 3 * 1_440, by: 1) where random.next() % 3 != 0 {
            steps.append(
                sample(.stepCount, minute * 60, minute * 60 + 60, Double(random.next() % 180), device: Self.footpod))
        }
        var start: Int64 = 0
        while start < 3 * 86_400 {
            let length = 30 + Int64(random.next() % 600)
            steps.append(sample(.stepCount, start, start + length, Double(random.next() % 900), device: Self.watch))
            start += length + Int64(random.next() % 120)
        }
        for chunk in stride(from: 0, to: steps.count, by: 500) {
            outcomes.append(try await store.save(Array(steps[chunk..<min(chunk + 500, steps.count)]), as: .owner))
        }
        for walk in 0..<30 {
            for version in [1, 3, 2] {
                let start = Int64(walk) * 8_000 + 100
                var entry = sample(
                    .stepCount, start, start + 1_200, Double(1_000 + walk * 10 + version), source: Self.logger,
                    device: nil)
                entry.id = Self.uuid(&random)  // a client's id: each version is a sample of its own
                entry.metadata = [
                    MetadataKey.externalUUID: .string("walk-\(walk)"),
                    MetadataKey.syncVersion: .number(Double(version)),
                ]
                outcomes.append(try await store.save([entry], as: .app(Self.logger.identifier)))
            }
        }
        // Heartbeat series, one a minute for an hour, written twice.
        let series = (0..<60).map { heartbeats(minute: Int64($0)) }
        outcomes.append(try await store.save(series, as: .owner))
        outcomes.append(try await store.save(series, as: .owner))

        // Sleep stages from two sources (category samples), overlapping each other, written twice.
        var sleep: [QuantitySample] = []
        for source in [Self.gateway, Self.logger] {
            var start = Int64(random.next() % 3_600)
            while start < 3 * 86_400 {
                let length = Int64(60 + random.next() % 5_400)
                sleep.append(
                    sample(
                        .sleepAnalysis, start, start + length, Double(random.next() % 6), source: source, device: nil,
                        subject: random.next() % 4 == 0 ? "bob" : "alice"))
                start += length + Int64(random.next() % 1_800)
            }
        }
        outcomes.append(try await store.save(sleep, as: .owner))
        outcomes.append(try await store.save(sleep, as: .owner))

        // Deletions: every 97th heart rate, every 50th step sample, every 7th sleep sample, some series.
        let doomed =
            stride(from: 0, to: heartRates.count, by: 97).map { heartRates[$0].id }
            + stride(from: 0, to: steps.count, by: 50).map { steps[$0].id }
            + stride(from: 0, to: sleep.count, by: 7).map { sleep[$0].id } + [series[3].id, series[40].id]
        _ = try await store.delete(doomed, as: .owner)
        return outcomes
    }

    private func sample(
        _ type: HealthType, _ start: Int64, _ end: Int64, _ value: Double, source: Source = gateway,
        device: Device?, subject: String? = "alice"
    ) -> QuantitySample {
        QuantitySample(
            type: type, start: Instant(seconds: Self.day0 + start), end: Instant(seconds: Self.day0 + end),
            value: value, source: source, device: device, subject: subject,
            metadata: device == nil ? [:] : [MetadataKey.heartRateSensorLocation: .number(1)])
    }

    static func uuid(_ random: inout SplitMix64) -> UUID {
        let high = random.next()
        let low = random.next()
        func byte(_ value: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> (index * 8)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5),
                0x40 | byte(high, 6) & 0x0F, byte(high, 7), 0x80 | byte(low, 0) & 0x3F, byte(low, 1), byte(low, 2),
                byte(low, 3), byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)
            ))
    }

    private func heartbeats(minute: Int64) -> HeartbeatSeriesSample {
        var beats: [Beat] = []
        var offset = 0.0
        for index in 0..<50 {
            let rr = Double(800 + (index * 7 + Int(minute)) % 120) * 1000 / 1024
            offset += rr
            beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr, precededByGap: index == 20))
        }
        return HeartbeatSeriesSample(
            start: Instant(seconds: Self.day0 + minute * 60), end: Instant(seconds: Self.day0 + minute * 60 + 60),
            beats: beats, source: Self.gateway, device: Self.strap, subject: "alice")
    }

    @Test func bothEnginesGiveTheSameAnswers() async throws {
        let (sqlite, sqliteStorage) = try makeStore(.sqlite)
        defer { sqliteStorage.remove() }
        let (postgres, postgresStorage) = try makeStore(.postgresql)
        defer { postgresStorage.remove() }
        let written = try await writeEverything(to: sqlite)
        #expect(try await writeEverything(to: postgres) == written)
        let kinds = Set(written.joined())
        #expect(kinds == [.inserted, .duplicate, .conflict, .replaced, .stale])

        // Query results, in every order and filter.
        let from = Instant(seconds: Self.day0 + 40_000)
        let to = Instant(seconds: Self.day0 + 50_000)
        let queries = [
            SampleQuery(type: .heartRate), SampleQuery(type: .stepCount),
            SampleQuery(type: .heartRate, from: from, to: to, devices: [Self.watch.key], ascending: false),
            SampleQuery(type: .heartRate, subjects: ["bob"], limit: 333),
            SampleQuery(type: .stepCount, from: from, to: to, strictStart: true, sources: [Self.logger.identifier]),
            SampleQuery(type: .heartRate, metadata: [.exists(MetadataKey.heartRateSensorLocation)], limit: 2_000),
        ]
        for query in queries {
            let expected = try await sqlite.samples(query, as: .owner)
            #expect(try await postgres.samples(query, as: .owner) == expected)
            #expect(!expected.samples.isEmpty)
        }
        let app = Caller.app(Self.logger.identifier)
        #expect(
            try await postgres.samples(SampleQuery(type: .stepCount), as: app)
                == sqlite.samples(SampleQuery(type: .stepCount), as: app))
        let series = SampleQuery(type: .heartbeatSeries, limit: 25)
        #expect(try await postgres.heartbeatSeries(series, as: .owner) == sqlite.heartbeatSeries(series, as: .owner))

        // Statistics: merged steps (winners in `sources`), per source, heart rate from rollups and exact.
        let berlin = try StatisticsBuckets(
            interval: StatisticsInterval(parsing: "1d"), timeZoneIdentifier: "Europe/Berlin"
        )
        .buckets(from: Instant(seconds: Self.day0), to: Instant(seconds: Self.day0 + 3 * 86_400))
        let hours = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1h"), timeZone: .gmt)
            .buckets(from: Instant(seconds: Self.day0), to: Instant(seconds: Self.day0 + 86_400))
        let statistics = [
            StatisticsQuery(type: .stepCount, buckets: hours),
            StatisticsQuery(type: .stepCount, buckets: berlin),
            StatisticsQuery(type: .stepCount, buckets: hours, separateBySource: true),
            StatisticsQuery(type: .stepCount, buckets: hours, unranked: .exclude),
            StatisticsQuery(
                type: .stepCount, buckets: berlin,
                priority: [Provenance(source: Self.gateway.identifier, device: Self.watch.key)]),
            StatisticsQuery(type: .heartRate, buckets: berlin),
            StatisticsQuery(type: .heartRate, buckets: berlin, separateBySource: true),
            StatisticsQuery(type: .heartRate, buckets: berlin, exact: true),
            StatisticsQuery(type: .heartRate, buckets: hours, subjects: ["bob"]),
            StatisticsQuery(type: .sleepAnalysis, buckets: hours),
            StatisticsQuery(type: .sleepAnalysis, buckets: berlin, separateBySource: true),
            StatisticsQuery(type: .sleepAnalysis, buckets: berlin, subjects: ["bob"]),
        ]
        for query in statistics {
            let expected = try await sqlite.statistics(query, as: .owner)
            let actual = try await postgres.statistics(query, as: .owner)
            #expect(actual.count == expected.count)
            for (a, b) in zip(actual, expected) {
                #expect(a.bucket == b.bucket)
                #expect(a.provenance == b.provenance)
                #expect(a.sources == b.sources)
                #expect(nearlyEqual(a.sum, b.sum))
                #expect(a.discrete?.count == b.discrete?.count)
                #expect(nearlyEqual(a.discrete?.average, b.discrete?.average))
                #expect(a.discrete?.minimum == b.discrete?.minimum)
                #expect(a.discrete?.maximum == b.discrete?.maximum)
                #expect(a.discrete?.mostRecent == b.discrete?.mostRecent)
                #expect(a.discrete?.mostRecentEnd == b.discrete?.mostRecentEnd)
                #expect(nearlyEqual(a.discrete?.timeWeightedAverage, b.discrete?.timeWeightedAverage))
                #expect(a.categories == b.categories)
            }
            if query.type == .sleepAnalysis { #expect(expected.contains { !$0.categories.isEmpty }) }
        }

        // Changes: the same samples added and deleted (the order of one batch's samples may differ).
        for type in [HealthType.heartRate, .stepCount, .sleepAnalysis, .heartbeatSeries] {
            let expected = try await sqlite.changes(of: type, since: nil, limit: 1_000_000, as: .owner)
            let actual = try await postgres.changes(of: type, since: nil, limit: 1_000_000, as: .owner)
            #expect(Set(actual.added) == Set(expected.added))
            #expect(Set(actual.heartbeatSeries) == Set(expected.heartbeatSeries))
            #expect(actual.deleted == expected.deleted)
            #expect(!actual.hasMore)
        }
    }
}
