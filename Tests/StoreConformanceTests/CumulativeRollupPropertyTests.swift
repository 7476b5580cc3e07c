import Foundation
import Health
import StoreEngine
import Support
import TestSupport
import Testing

@testable import PostgresStore
@testable import SQLiteStore

/// Cumulative statistics answered from the quarter-hour rollups (`docs/store-semantics.md`, item 13) are the
/// sweep's answers: random samples from overlapping sources, devices and subjects (instants, zeros, samples
/// across quarter borders and longer than a day), saved in batches and as series, deleted, merged under random
/// priorities, in buckets of every width and in zones with half- and quarter-hour offsets and summer time, give
/// the same sums and sources with and without `exact`, on both engines; retention prunes half the samples, and a
/// store from before the rollups gets them built. Seeded: the seed is printed, and `WEARHOUSE_PROPERTY_SEED=<n>`
/// runs that one again.
@Suite struct CumulativeRollupPropertyTests {
    static let day0: Int64 = 1_743_206_400  // 2025-03-29T00:00Z, before Berlin's switch to summer time
    static let sources = ["org.wearhouse.gateway", "com.example.watch", "com.example.phone"]
    static let devices: [Device?] = [
        nil, Device(name: "Strap", localIdentifier: "A0:01"), Device(name: "Wrist", localIdentifier: "C7:02"),
    ]
    static let subjects: [String?] = [nil, "alice", "bob"]
    static let zones = ["UTC", "Europe/Berlin", "Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns"]

    /// A step sample somewhere in four days: mostly minutes long, some instants, some hours, some over a day.
    static func sample(_ random: inout SplitMix64) -> QuantitySample {
        let start = day0 * 1_000 + Int64(random.next() % (4 * 86_400)) * 1_000 + Int64(random.next() % 3) * 250
        let length: Int64 =
            switch random.next() % 40 {
            case 0, 1, 2: 0
            case 3, 4: Int64(1 + random.next() % 8) * 3_600_000
            case 5: Int64(86_400 + random.next() % 86_400) * 1_000
            default: Int64(1 + random.next() % 1_200) * 1_000
            }
        let value = random.next() % 10 == 0 ? 0 : Double(random.next() % 3_000) / 4
        return QuantitySample(
            type: .stepCount, start: Instant(milliseconds: start), end: Instant(milliseconds: start + length),
            value: value, source: Source(identifier: random.pick(sources)), device: random.pick(devices),
            subject: random.pick(subjects))
    }

    /// A minute-by-minute stream of one source and device (what a footpod or a watch writes), saved as a series.
    static func stream(_ random: inout SplitMix64) -> [QuantitySample] {
        let first = day0 + Int64(random.next() % (3 * 1_440)) * 60
        let source = Source(identifier: random.pick(sources))
        let device = random.pick(devices)
        let subject = random.pick(subjects)
        return (0..<Int(30 + random.next() % 300)).map { minute in
            let start = first + Int64(minute) * 60
            return QuantitySample(
                type: .stepCount, start: Instant(seconds: start), end: Instant(seconds: start + 60),
                value: Double(random.next() % 140), source: source, device: device, subject: subject)
        }
    }

    static func priority(_ random: inout SplitMix64) -> SourcePriority? {
        guard random.next() % 3 != 0 else { return nil }
        var order: [Provenance] = []
        for source in sources where random.next() % 2 == 0 {
            switch random.next() % 3 {
            case 0: order.append(Provenance(source: source, device: Provenance.anyDevice))
            case 1: order.append(Provenance(source: source, device: nil))
            default: order.append(Provenance(source: source, device: "A0:01"))
            }
        }
        order.shuffle(using: &random)
        let unranked: CumulativeMerge.UnrankedPolicy = random.next() % 3 == 0 && !order.isEmpty ? .exclude : .gapFill
        return SourcePriority(order: order, unranked: unranked)
    }

    static func close(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-6 * max(1, abs(a), abs(b))
    }

    /// Both answers, bucket by bucket; the first difference is reported with the query.
    static func compare(
        _ store: any HealthStoreEngine, _ query: StatisticsQuery, seed: UInt64, round: Int
    ) async throws {
        #expect(CumulativeRollupAnswer.fits(query))
        let fast = try await store.statistics(query, as: .owner)
        var exactQuery = query
        exactQuery.exact = true
        let exact = try await store.statistics(exactQuery, as: .owner)
        let context = "seed \(seed) round \(round) \(query.buckets.count) buckets separate \(query.separateBySource)"
        try #require(fast.count == exact.count, "\(context): \(fast.count) results, the sweep has \(exact.count)")
        for (a, b) in zip(fast, exact) {
            let same =
                a.bucket == b.bucket && a.provenance == b.provenance && close(a.sum, b.sum)
                && Set(a.sources) == Set(b.sources)
            try #require(same, "\(context): \(a) but the sweep gives \(b)")
        }
    }

    @Test(arguments: Engine.allCases) func rollupAnswersAreTheSweepsAnswers(_ engine: Engine) async throws {
        let seed =
            ProcessInfo.processInfo.environment["WEARHOUSE_PROPERTY_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("CumulativeRollupPropertyTests (\(engine)): seed \(seed) (WEARHOUSE_PROPERTY_SEED=\(seed) runs it again)")
        try await Self.run(engine, seed: seed)
    }

    static func run(_ engine: Engine, seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let now = Instant(seconds: day0 + 5 * 86_400)
        let (store, storage) = try makeStore(engine, now: { now })
        defer { storage.remove() }
        var saved: [UUID] = []
        for round in 0..<12 {
            let batch = (0..<Int(20 + random.next() % 60)).map { _ in sample(&random) }
            _ = try await store.save(batch, as: .owner)
            saved += batch.map(\.id)
            if random.next() % 2 == 0 { _ = try await store.save(stream(&random), as: .owner) }
            if random.next() % 3 == 0, !saved.isEmpty {
                let doomed = (0..<Int(1 + random.next() % 10)).map { _ in random.pick(saved) }
                _ = try await store.delete(doomed, as: .owner)
            }
            if random.next() % 3 == 0 { try await store.setPriority(of: .stepCount, priority(&random)) }
            for _ in 0..<6 {
                let interval = random.pick(["15m", "30m", "1h", "6h", "1d", "1w"])
                let zone = random.pick(zones)
                let from = day0 + Int64(random.next() % 3) * 86_400 - 86_400
                let buckets = try StatisticsBuckets(
                    interval: StatisticsInterval(parsing: interval), timeZoneIdentifier: zone
                ).buckets(
                    from: Instant(seconds: from), to: Instant(seconds: from + Int64(1 + random.next() % 5) * 86_400))
                let override = random.next() % 4 == 0 ? priority(&random) : nil
                let query = StatisticsQuery(
                    type: .stepCount, buckets: buckets, sources: random.someOf(sources),
                    devices: random.someOf(["A0:01", "C7:02"]), subjects: random.someOf(["alice", "bob"]),
                    separateBySource: random.next() % 3 == 0, priority: override?.order,
                    unranked: override?.unranked)
                try await compare(store, query, seed: seed, round: round)
            }
        }
        // Retention: the samples that ended three days before `now` go, and the rollups follow (those of the
        // quarters the cutoff leaves partly covered are rebuilt).
        try await store.setRetention(of: .stepCount, days: 3)
        _ = try await store.prune()
        for interval in ["15m", "1d"] {
            let buckets = try StatisticsBuckets(
                interval: StatisticsInterval(parsing: interval), timeZoneIdentifier: "Europe/Berlin"
            ).buckets(from: Instant(seconds: day0 - 86_400), to: Instant(seconds: day0 + 6 * 86_400))
            for separate in [false, true] {
                try await compare(
                    store, StatisticsQuery(type: .stepCount, buckets: buckets, separateBySource: separate), seed: seed,
                    round: 99)
            }
        }
        // Both ways were taken: quarters from the rollups, and quarters swept.
        let quarters = await quarterCounts(store)
        print(
            "CumulativeRollupPropertyTests (\(engine)): \(quarters.fromRollups) quarters from rollups, "
                + "\(quarters.swept) swept")
        #expect(quarters.fromRollups > 0 && quarters.swept > 0)

        // A store from before the rollups gets them built from its samples when it opens: the same rows the saves,
        // deletes and the prune kept up to date.
        let kept = try rollupRows(storage)
        try forgetRollups(storage)
        let reopened = try storage.reopen()
        let built = try rollupRows(storage)
        #expect(kept.count == built.count)
        for (a, b) in zip(kept, built) {
            // Saves mark a quarter unclean when a portion lands between others (they cannot tell overlap from a
            // fit); a build from the sorted samples may find it clean. Everything else is the same.
            let same = a.key == b.key && close(a.sum, b.sum) && (!a.clean || b.clean)
            try #require(same, "seed \(seed): kept \(a), built \(b)")
        }
        #expect(!built.isEmpty)
        let week = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1h"), timeZoneIdentifier: "UTC")
            .buckets(from: Instant(seconds: day0 - 86_400), to: Instant(seconds: day0 + 6 * 86_400))
        try await compare(reopened, StatisticsQuery(type: .stepCount, buckets: week), seed: seed, round: -1)
    }

    /// The quarters the store's cumulative statistics took from rollups and swept since it opened.
    static func quarterCounts(_ store: any HealthStoreEngine) async -> (fromRollups: Int, swept: Int) {
        if let sqlite = store as? SQLiteHealthStore { return await sqlite.cumulativeQuarters }
        if let postgres = store as? PostgresHealthStore { return await postgres.cumulativeQuarters }
        return (0, 0)
    }

    /// A range longer than the rollups answer (a few bytes a quarter hour) is swept: one bucket over most of the
    /// supported years takes no memory for its quarters, and gives the sweep's answer.
    @Test(arguments: Engine.allCases) func aRangeOverThirtyYearsIsSwept(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var random = SplitMix64(seed: 7)
        _ = try await store.save((0..<200).map { _ in Self.sample(&random) }, as: .owner)
        let first = try LocalDateTime(year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0, millisecond: 0)
        let last = try LocalDateTime(year: 9999, month: 1, day: 1, hour: 0, minute: 0, second: 0, millisecond: 0)
        let whole = StatisticsBucket(
            start: Instant(milliseconds: first.naiveMilliseconds), end: Instant(milliseconds: last.naiveMilliseconds),
            startOffsetSeconds: 0, endOffsetSeconds: 0, localStart: first, localEnd: last)
        let query = StatisticsQuery(type: .stepCount, buckets: [whole])
        #expect(!CumulativeRollupAnswer.fits(query))
        var exact = query
        exact.exact = true
        let answer = try await store.statistics(query, as: .owner)
        #expect(answer == (try await store.statistics(exact, as: .owner)))
        #expect((answer.first?.sum ?? 0) > 0)
    }

    /// The SQL of `rollupRows`: every cumulative rollup row in key order, the key, span, length and positive flag
    /// as the first eight columns, then the sum and the clean flag; then every span row.
    static let rollupSQL = """
        SELECT type_id, bucket_ms, source_id, device_id, subject_id, min_seq, max_seq, shape & ~(CAST(1 AS BIGINT) << 60),
            sum, shape >> 60 & 1
        FROM cumulative_rollups ORDER BY type_id, bucket_ms, source_id, device_id, subject_id
        """
    static let spanSQL =
        "SELECT type_id, start_ms, end_ms, count FROM cumulative_spans ORDER BY type_id, start_ms, end_ms"

    /// Every cumulative rollup and span row of the store: the key, span, length and positive flag as one string,
    /// the sum, and the clean flag.
    static func rollupRows(_ storage: Storage) throws -> [(key: String, sum: Double, clean: Bool)] {
        var rows: [(key: String, sum: Double, clean: Bool)] = []
        switch storage.engine {
        case .sqlite:
            let connection = try SQLiteConnection(path: storage.location)
            let rollups = try connection.prepare(rollupSQL)
            while try rollups.step() {
                rows.append(
                    (
                        (0..<8).map { String(rollups.int64($0)) }.joined(separator: " "), rollups.double(8),
                        rollups.int64(9) == 1
                    ))
            }
            let spans = try connection.prepare(spanSQL)
            while try spans.step() {
                rows.append(("span " + (0..<4).map { String(spans.int64($0)) }.joined(separator: " "), 0, true))
            }
        case .postgresql:
            for line in try psql(storage, rollupSQL).split(separator: "\n") {
                let fields = line.split(separator: "|").map(String.init)
                try #require(fields.count == 10, "a rollup row: \(line)")
                rows.append((fields.prefix(8).joined(separator: " "), Double(fields[8]) ?? .nan, fields[9] == "1"))
            }
            for line in try psql(storage, spanSQL).split(separator: "\n") {
                rows.append(("span " + line.split(separator: "|").joined(separator: " "), 0, true))
            }
        }
        return rows
    }

    /// Takes the store back to the schema before the cumulative rollups (their tables dropped).
    static func forgetRollups(_ storage: Storage) throws {
        let drop = "DROP TABLE cumulative_rollups; DROP TABLE cumulative_spans;"
        switch storage.engine {
        case .sqlite:
            let version = try #require(SQLiteSchema.migrations.firstIndex { $0.contains("cumulative_rollups") })
            let connection = try SQLiteConnection(path: storage.location)
            // The day rollups came after the cumulative ones (and are built from the quarter-hour rollups).
            try connection.execute(drop + " DROP TABLE day_rollups; PRAGMA user_version = \(version)")
        case .postgresql:
            let version = try #require(PostgresSchema.migrations.firstIndex { $0.contains("cumulative_rollups") })
            try psql(storage, drop + " UPDATE wearhouse_schema SET version = \(version)")
        }
    }

    @discardableResult
    static func psql(_ storage: Storage, _ sql: String) throws -> String {
        let database = String(storage.location.split(separator: "=").last ?? "")
        return try PostgresServer.shared().psql(sql, database: database)
    }
}
