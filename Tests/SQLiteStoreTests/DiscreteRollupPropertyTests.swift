import Foundation
import Health
import StoreEngine
import Support
import TestSupport
import Testing

@testable import SQLiteStore

/// Discrete statistics answered from the rollups (`docs/store-semantics.md`, item 13: a bucket's whole UTC days from
/// the day rollups, the rest from the quarter hours') are the sweep's answers: random heart rates from several
/// sources, devices and subjects, saved in batches and as series, deleted and pruned, in buckets of every width and
/// in zones with half- and quarter-hour offsets and summer time, give the same count, sum, minimum, maximum and
/// most recent with and without `exact`. Seeded: the seed is printed, and `WEARHOUSE_PROPERTY_SEED=<n>` runs that
/// one again.
@Suite struct DiscreteRollupPropertyTests {
    static let day0: Int64 = 1_743_206_400  // 2025-03-29T00:00Z, before Berlin's switch to summer time
    static let sources = ["org.wearhouse.gateway", "com.example.watch", "com.example.phone"]
    static let devices: [Device?] = [
        nil, Device(name: "Strap", localIdentifier: "A0:01"), Device(name: "Wrist", localIdentifier: "C7:02"),
    ]
    static let subjects: [String?] = [nil, "alice", "bob"]
    static let zones = ["UTC", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns"]

    /// Sample times are drawn without repeats, so that "the most recent" of a bucket is one sample whichever way
    /// the bucket is summed.
    struct Times {
        var used: Set<Int64> = []

        mutating func fresh(_ random: inout SplitMix64, within days: Int64) -> Int64 {
            while true {
                let start = day0 * 1_000 + Int64(random.next() % UInt64(days * 86_400_000))
                if used.insert(start).inserted { return start }
            }
        }
    }

    /// A heart rate somewhere in ten days: mostly instants, some a few seconds long.
    static func sample(_ random: inout SplitMix64, _ times: inout Times) -> QuantitySample {
        let start = times.fresh(&random, within: 10)
        let length = random.next() % 4 == 0 ? Int64(random.next() % 5_000) : 0
        return QuantitySample(
            type: .heartRate, start: Instant(milliseconds: start), end: Instant(milliseconds: start + length),
            value: Double(40 + random.next() % 1_500) / 10, source: Source(identifier: random.pick(sources)),
            device: random.pick(devices), subject: random.pick(subjects))
    }

    /// A 1 Hz run of one source and device (what a strap sends), saved as a series; it may cross midnight.
    static func stream(_ random: inout SplitMix64, _ times: inout Times) -> [QuantitySample] {
        let first = times.fresh(&random, within: 9)
        let source = Source(identifier: random.pick(sources))
        let device = random.pick(devices)
        let subject = random.pick(subjects)
        return (0..<Int(60 + random.next() % 3_000)).compactMap { second in
            let start = first + Int64(second) * 1_000
            guard times.used.insert(start).inserted else { return nil }
            return QuantitySample(
                type: .heartRate, start: Instant(milliseconds: start), end: Instant(milliseconds: start),
                value: Double(50 + random.next() % 120), source: source, device: device, subject: subject)
        }
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-9 * max(1, abs(a), abs(b))
    }

    /// Both answers, bucket by bucket; the first difference is reported with the query.
    static func compare(_ store: SQLiteHealthStore, _ query: StatisticsQuery, seed: UInt64, round: Int) async throws {
        #expect(try await store.canUseRollups(query, .owner))
        let fast = try await store.statistics(query, as: .owner)
        var exactQuery = query
        exactQuery.exact = true
        let exact = try await store.statistics(exactQuery, as: .owner)
        let context = "seed \(seed) round \(round) \(query.buckets.count) buckets separate \(query.separateBySource)"
        try #require(fast.count == exact.count, "\(context): \(fast.count) results, the sweep has \(exact.count)")
        for (a, b) in zip(fast, exact) {
            guard let x = a.discrete, let y = b.discrete else {
                try #require(a.discrete == nil && b.discrete == nil, "\(context): \(a) but the sweep gives \(b)")
                continue
            }
            let same =
                a.bucket == b.bucket && a.provenance == b.provenance && x.count == y.count && close(x.sum, y.sum)
                && close(x.average, y.average) && x.minimum == y.minimum && x.maximum == y.maximum
                && x.mostRecent == y.mostRecent && x.mostRecentEnd == y.mostRecentEnd
            try #require(same, "\(context): \(a) but the sweep gives \(b)")
        }
    }

    static func query(_ random: inout SplitMix64) throws -> StatisticsQuery {
        let interval = random.pick(["15m", "1h", "6h", "1d", "1d", "2d", "1w", "1w"])
        let zone = random.pick(zones)
        let from = day0 + Int64(random.next() % 4) * 86_400 - 86_400
        let buckets = try StatisticsBuckets(interval: StatisticsInterval(parsing: interval), timeZoneIdentifier: zone)
            .buckets(from: Instant(seconds: from), to: Instant(seconds: from + Int64(2 + random.next() % 10) * 86_400))
        return StatisticsQuery(
            type: .heartRate, buckets: buckets, sources: random.someOf(sources),
            devices: random.someOf(["A0:01", "C7:02"]), subjects: random.someOf(["alice", "bob"]),
            separateBySource: random.next() % 3 == 0)
    }

    @Test func rollupAnswersAreTheSweepsAnswers() async throws {
        let seed =
            ProcessInfo.processInfo.environment["WEARHOUSE_PROPERTY_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("DiscreteRollupPropertyTests: seed \(seed) (WEARHOUSE_PROPERTY_SEED=\(seed) runs it again)")
        try await Self.run(seed: seed)
    }

    static func run(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        var times = Times()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let now = Instant(seconds: day0 + 12 * 86_400)
        let path = directory.appendingPathComponent("health.db").path
        let store = try SQLiteHealthStore(path: path, now: { now })
        var saved: [UUID] = []
        for round in 0..<10 {
            let batch = (0..<Int(20 + random.next() % 200)).map { _ in sample(&random, &times) }
            _ = try await store.save(batch, as: .owner)
            saved += batch.map(\.id)
            if random.next() % 2 == 0 { _ = try await store.save(stream(&random, &times), as: .owner) }
            if random.next() % 2 == 0, !saved.isEmpty {
                let doomed = (0..<Int(1 + random.next() % 20)).map { _ in random.pick(saved) }
                _ = try await store.delete(doomed, as: .owner)
            }
            for _ in 0..<8 { try await compare(store, try query(&random), seed: seed, round: round) }
        }
        // Retention: the samples that ended five days before `now` go, and the rollups follow (the quarter hour
        // and the day the cutoff falls in are rebuilt).
        try await store.setRetention(of: .heartRate, days: 5)
        _ = try await store.prune()
        for interval in ["1h", "1d", "1w"] {
            for zone in ["UTC", "Asia/Kathmandu"] {
                let buckets = try StatisticsBuckets(
                    interval: StatisticsInterval(parsing: interval), timeZoneIdentifier: zone
                ).buckets(from: Instant(seconds: day0 - 86_400), to: Instant(seconds: day0 + 12 * 86_400))
                for separate in [false, true] {
                    try await compare(
                        store, StatisticsQuery(type: .heartRate, buckets: buckets, separateBySource: separate),
                        seed: seed, round: 99)
                }
            }
        }

        // A store from before the day rollups (schema 15) gets them built from its quarter hours when it opens:
        // the same rows the saves, deletes and retention kept up to date.
        let kept = try dayRows(path)
        #expect(!kept.isEmpty)
        do {
            let old = try SQLiteConnection(path: path)
            try old.execute("DROP TABLE day_rollups; PRAGMA user_version = 15")
        }
        let reopened = try SQLiteHealthStore(path: path, now: { now })
        let built = try dayRows(path)
        try #require(kept.count == built.count, "seed \(seed): \(kept.count) day rows kept, \(built.count) built")
        for (a, b) in zip(kept, built) {
            let same = a.key == b.key && close(a.sum, b.sum) && a.rest == b.rest
            try #require(same, "seed \(seed): kept \(a), built \(b)")
        }
        let weeks = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1w"), timeZoneIdentifier: "UTC")
            .buckets(from: Instant(seconds: day0 - 86_400), to: Instant(seconds: day0 + 12 * 86_400))
        try await compare(reopened, StatisticsQuery(type: .heartRate, buckets: weeks), seed: seed, round: -1)
    }

    /// Every day rollup row of the store at `path`, in key order: the key, the sum, and the other aggregates.
    static func dayRows(_ path: String) throws -> [(key: String, sum: Double, rest: String)] {
        let connection = try SQLiteConnection(path: path)
        let rows = try connection.prepare(
            """
            SELECT type_id, day_ms, source_id, device_id, subject_id, sum, n, min, max, recent_start, recent_end,
                recent_value
            FROM day_rollups ORDER BY type_id, day_ms, source_id, device_id, subject_id
            """)
        var result: [(key: String, sum: Double, rest: String)] = []
        while try rows.step() {
            result.append(
                (
                    (0..<5).map { String(rows.int64($0)) }.joined(separator: " "), rows.double(5),
                    "\(rows.int64(6)) \(rows.double(7)) \(rows.double(8)) \(rows.int64(9)) \(rows.int64(10)) "
                        + "\(rows.double(11))"
                ))
        }
        return result
    }

    /// How buckets divide between the levels: whole UTC days from the days, the rest in quarter hours, merged
    /// where they touch; a bucket with no whole day is all quarter hours.
    @Test func bucketsDivideIntoWholeDaysAndQuarterHours() {
        let day = Rollup.dayMilliseconds
        let hour: Int64 = 3_600_000
        // Two weeks starting at 23:00 UTC (midnight in UTC+1), then a bucket of six hours.
        let buckets = [
            (start: -hour, end: 7 * day - hour), (start: 7 * day - hour, end: 14 * day - hour),
            (start: 14 * day - hour, end: 14 * day + 5 * hour),
        ]
        let levels = Rollup.levels(buckets)
        #expect(
            levels.days.map { [$0.start, $0.end, Int64($0.bucket)] } == [[0, 6 * day, 0], [7 * day, 13 * day, 1]])
        #expect(
            levels.quarters.map { [$0.start, $0.end] } == [
                [-hour, 0], [6 * day, 7 * day], [13 * day, 14 * day + 5 * hour],
            ])
        // Aligned on UTC days: only days; before the epoch too.
        let aligned = Rollup.levels([(start: -2 * day, end: 0), (start: 0, end: day)])
        #expect(aligned.quarters.isEmpty)
        #expect(aligned.days.map { [$0.start, $0.end, Int64($0.bucket)] } == [[-2 * day, 0, 0], [0, day, 1]])
        #expect(Rollup.day(-1) == -day && Rollup.day(day) == day && Rollup.bucket(-1) == -Rollup.milliseconds)
    }
}
