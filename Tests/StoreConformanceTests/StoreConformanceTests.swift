import Foundation
import Health
import SQLiteStore
import StoreEngine
import Synchronization
import TestSupport
import Testing

/// The behaviour every `HealthStore` engine must show, run against each engine: SQLite on real files, PostgreSQL
/// on a throwaway server (``Engine``).
@Suite struct StoreConformanceTests {
    static let gateway = Source(identifier: "org.wearhouse.gateway", version: "0.1.0")
    static let strap = Device(
        name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", firmwareVersion: "3.0.35",
        serialNumber: "690A1321", localIdentifier: "A0:9E:1A:00:00:01")
    static let watch = Device(
        name: "PineTime", manufacturer: "Pine64", model: "PineTime", localIdentifier: "C7:00:00:00:00:02")

    func heartRate(_ second: Int64, _ bpm: Double, subject: String? = "alice", device: Device? = strap)
        -> QuantitySample
    {
        QuantitySample(
            type: .heartRate, start: Instant(seconds: second), end: Instant(seconds: second), value: bpm,
            source: Self.gateway, device: device, subject: subject,
            metadata: [MetadataKey.heartRateSensorLocation: .number(1)])
    }

    @Test(arguments: Engine.allCases) func savesAndReadsBackEverything(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let samples = (0..<10).map { heartRate(1_700_000_000 + Int64($0), 60 + Double($0)) }
        let outcomes = try await store.save(samples, as: .owner)
        #expect(outcomes == Array(repeating: .inserted, count: 10))
        let page = try await store.samples(SampleQuery(type: .heartRate), as: .owner)
        #expect(page.samples == samples)
        #expect(page.samples.first?.device == Self.strap)
        #expect(page.samples.first?.metadata[MetadataKey.heartRateSensorLocation] == .number(1))
    }

    @Test(arguments: Engine.allCases) func writingTheSameBatchTwiceReportsDuplicates(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let samples = (0..<5).map { heartRate(1_700_000_000 + Int64($0), 70) }
        _ = try await store.save(samples, as: .owner)
        // Same natural keys, new uuids (a replay builds new sample objects): duplicates, not new rows.
        let replay = (0..<5).map { heartRate(1_700_000_000 + Int64($0), 70) }
        #expect(try await store.save(replay, as: .owner) == Array(repeating: .duplicate, count: 5))
        #expect(try await store.save(samples, as: .owner) == Array(repeating: .duplicate, count: 5))
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 5)
        // Same key, different value: the first write stands.
        #expect(try await store.save([heartRate(1_700_000_000, 99)], as: .owner) == [.conflict])
    }

    @Test(arguments: Engine.allCases) func externalUUIDVersionsReplaceOnlyWhenGreater(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let app = Source(identifier: "com.example.logger")
        func steps(_ value: Double, version: Double) -> QuantitySample {
            QuantitySample(
                type: .stepCount, start: Instant(seconds: 1_000), end: Instant(seconds: 1_600), value: value,
                source: app,
                metadata: [MetadataKey.externalUUID: .string("walk-1"), MetadataKey.syncVersion: .number(version)])
        }
        let first = steps(100, version: 1)
        #expect(try await store.save([first], as: .owner) == [.inserted])
        #expect(try await store.save([steps(100, version: 1)], as: .owner) == [.duplicate])
        #expect(try await store.save([steps(150, version: 1)], as: .owner) == [.conflict])
        #expect(try await store.save([steps(200, version: 2)], as: .owner) == [.replaced])
        #expect(try await store.save([steps(50, version: 1)], as: .owner) == [.stale])
        let stored = try await store.samples(SampleQuery(type: .stepCount), as: .owner).samples
        #expect(stored.map(\.value) == [200])
        let changes = try await store.changes(of: .stepCount, since: nil, limit: 100, as: .owner)
        #expect(changes.deleted == [first.id])
        #expect(changes.added.map(\.value) == [200])
    }

    @Test(arguments: Engine.allCases) func oneInvalidSampleRejectsTheWholeBatch(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let batch = [heartRate(1, 60), heartRate(2, 0), heartRate(3, 61)]  // 0 bpm is outside 1...300
        await #expect(throws: InvalidSampleError.self) { try await store.save(batch, as: .owner) }
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.isEmpty)
        var reversed = heartRate(10, 60)
        reversed.end = Instant(seconds: 9)
        await #expect(throws: InvalidSampleError.self) { try await store.save([reversed], as: .owner) }
    }

    @Test(arguments: Engine.allCases) func aBatchRejectedHalfwayLeavesNoTrace(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        let appSample = QuantitySample(
            type: .heartRate, start: Instant(seconds: 50), end: Instant(seconds: 50), value: 70,
            source: Source(identifier: "app"))
        _ = try await store.save([appSample], as: .app("app"))
        // A new sensor's first batch fails inside the transaction, after its device was stored and its first
        // sample counted in the rollups: the second sample's id names the app's sample.
        var clash = heartRate(200, 90, device: Self.watch)
        clash.id = appSample.id
        await #expect(throws: InvalidSampleError.self) {
            try await store.save([heartRate(100, 80, device: Self.watch), clash], as: .owner)
        }
        #expect(try await store.save([heartRate(300, 100, device: Self.watch)], as: .owner) == [.inserted])
        let watch = try await store.samples(SampleQuery(type: .heartRate, devices: [Self.watch.key]), as: .owner)
        #expect(watch.samples.map(\.value) == [100])
        #expect(watch.samples.first?.device == Self.watch)
        let buckets = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1d"), timeZone: .gmt)
            .buckets(from: Instant(seconds: 0), to: Instant(seconds: 2 * 86_400))
        let fromRollups = try await store.statistics(StatisticsQuery(type: .heartRate, buckets: buckets), as: .owner)
        #expect(fromRollups.first?.discrete?.count == 2)
        #expect(fromRollups.first?.discrete?.maximum == 100)
    }

    @Test(arguments: Engine.allCases) func appsSeeOnlyWhatTheirGrantsAllow(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        _ = try await store.save([heartRate(1, 60), heartRate(2, 61)], as: .owner)
        let reader = Caller.app("reader.service")
        let writer = Caller.app("writer.service")
        try await store.setAuthorization(
            app: "writer.service", [TypeAuthorization(type: "heartRate", read: false, share: true)])
        try await store.setAuthorization(
            app: "reader.service", [TypeAuthorization(type: "heartRate", read: true, share: false)])

        // A writer without read permission sees only its own samples, and no error.
        let own = QuantitySample(
            type: .heartRate, start: Instant(seconds: 3), end: Instant(seconds: 3), value: 80,
            source: Source(identifier: "writer.service"))
        #expect(try await store.save([own], as: writer) == [.inserted])
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: writer).samples == [own])
        // A reader sees everything; writing without share permission fails, and nothing is written.
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: reader).samples.count == 3)
        await #expect(throws: NotAuthorizedError.self) { try await store.save([heartRate(4, 70)], as: reader) }
        // An app with no grant at all sees nothing.
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .app("stranger")).samples.isEmpty)

        let log = try await store.accessLog(limit: 20)
        #expect(log.contains { $0.caller == reader && $0.operation == .save && $0.denied })
        #expect(log.contains { $0.caller == writer && $0.operation == .query && $0.sampleCount == 1 && !$0.denied })
        #expect(log.contains { $0.caller == reader && $0.operation == .query && $0.sampleCount == 3 })
        let apps = try await store.apps()
        #expect(apps.map(\.app) == ["reader.service", "writer.service"])
    }

    @Test(arguments: Engine.allCases) func mergedStepsDoNotDoubleCountTwoDevices(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        func steps(_ device: Device, _ start: Int64, _ end: Int64, _ value: Double) -> QuantitySample {
            QuantitySample(
                type: .stepCount, start: Instant(seconds: start), end: Instant(seconds: end), value: value,
                source: Self.gateway, device: device, subject: "alice")
        }
        // The footpod and the watch both counted the same 10-minute walk.
        _ = try await store.save([steps(Self.strap, 0, 600, 1_000), steps(Self.watch, 300, 900, 600)], as: .owner)
        try await store.setPriority(
            of: .stepCount, [Provenance(source: Self.gateway.identifier, device: Self.strap.key)])
        let buckets = try StatisticsBuckets.buckets(
            borders: [Instant(seconds: 0), Instant(seconds: 1_800)], timeZone: TimeZone(identifier: "UTC") ?? .gmt)
        let merged = try await store.statistics(StatisticsQuery(type: .stepCount, buckets: buckets), as: .owner)
        // Strap 0-600 s wins its whole span (1000); the watch fills 600-900 s: 600 * 300/600 = 300.
        #expect(merged.map(\.sum) == [1_300])
        let separate = try await store.statistics(
            StatisticsQuery(type: .stepCount, buckets: buckets, separateBySource: true), as: .owner)
        #expect(separate.map(\.sum) == [1_000, 600] || separate.map(\.sum) == [600, 1_000])
    }

    @Test(arguments: Engine.allCases) func dailyHeartRateStatisticsInBerlinAcrossDST(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        // 2025-03-30 is 23 hours long in Berlin. One reading per hour from 2025-03-29 23:00Z (midnight local).
        let dayStart: Int64 = 1_743_289_200  // 2025-03-30T00:00+01:00
        let readings = (0..<23).map { heartRate(dayStart + Int64($0) * 3_600, 60 + Double($0)) }
        _ = try await store.save(readings, as: .owner)
        let buckets = try StatisticsBuckets(
            interval: StatisticsInterval(parsing: "1d"), timeZoneIdentifier: "Europe/Berlin"
        ).buckets(from: Instant(seconds: dayStart), to: Instant(seconds: dayStart + 23 * 3_600))
        let day = try #require(buckets.first)
        #expect(buckets.count == 1)
        #expect(day.durationMilliseconds == 82_800_000)
        let result = try #require(
            try await store.statistics(StatisticsQuery(type: .heartRate, buckets: buckets), as: .owner).first)
        #expect(result.discrete?.count == 23)
        #expect(result.discrete?.minimum == 60)
        #expect(result.discrete?.maximum == 82)
        #expect(result.discrete?.average == 71)
    }

    @Test(arguments: Engine.allCases) func deletionLeavesTombstonesForSync(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let samples = (0..<4).map { heartRate(Int64($0), 60) }
        _ = try await store.save(samples, as: .owner)
        let first = try await store.changes(of: .heartRate, since: nil, limit: 3, as: .owner)
        #expect(first.added.count == 3)
        #expect(first.hasMore)
        #expect(try await store.delete([samples[0].id, samples[3].id], as: .owner) == 2)
        let second = try await store.changes(of: .heartRate, since: first.anchor, limit: 100, as: .owner)
        #expect(second.deleted == [samples[0].id, samples[3].id])
        #expect(second.added.isEmpty)  // the fourth sample came after the anchor but is gone now: only its tombstone
        #expect(!second.hasMore)
        // An app cannot delete samples it did not write.
        #expect(try await store.delete([samples[1].id], as: .app("stranger")) == 0)
    }

    @Test(arguments: Engine.allCases) func aDeletionCountIsWhatTheDeletionDeletes(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let samples = (0..<3).map { heartRate(Int64($0), 60) }
        _ = try await store.save(samples, as: .owner)
        let beats = series(minute: 0)
        #expect(try await store.save([beats], as: .owner) == [.inserted])
        // An unknown id counts nothing, an id given twice once; a heartbeat series counts; nothing is deleted.
        let ids = [samples[0].id, UUID(), samples[0].id, samples[2].id, beats.id]
        #expect(try await store.deletionCount(ids, as: .owner) == 3)
        #expect(try await store.deletionCount([samples[1].id], as: .app("stranger")) == 0)
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples == samples)
        #expect(try await store.changes(of: .heartRate, since: nil, limit: 10, as: .owner).deleted.isEmpty)
        #expect(try await store.delete(ids, as: .owner) == 3)
        #expect(try await store.deletionCount(ids, as: .owner) == 0)
    }

    @Test(arguments: Engine.allCases) func pagesWithACursor(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let samples = (0..<25).map { heartRate(Int64($0), 60) }
        _ = try await store.save(samples, as: .owner)
        var query = SampleQuery(type: .heartRate, limit: 10)
        var seen: [QuantitySample] = []
        while true {
            let page = try await store.samples(query, as: .owner)
            seen += page.samples
            guard let next = page.next else { break }
            query.cursor = next
        }
        #expect(seen == samples)
        query = SampleQuery(type: .heartRate, ascending: false, limit: 3)
        #expect(
            try await store.samples(query, as: .owner).samples.map(\.start.milliseconds) == [24_000, 23_000, 22_000])
    }

    @Test(arguments: Engine.allCases) func storeIsPrivateAndKeepsItsSamplesAfterReopening(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        _ = try await store.save([heartRate(1, 60)], as: .owner)
        if let sqlite = store as? SQLiteHealthStore {
            let attributes = try FileManager.default.attributesOfItem(atPath: sqlite.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try await sqlite.integrityCheck() == ["ok"])
        }
        let reopened = try storage.reopen()
        #expect(try await reopened.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 1)
    }

    @Test(arguments: Engine.allCases) func denseSeriesAndSingleSamplesMixInOneOrderedStream(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        // 3,000 gateway readings (kept as chunks) and a reading an app wrote every 100 s (kept as rows).
        let series = (0..<3_000).map { heartRate(Int64($0), 60 + Double($0 % 40)) }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        let appSamples = stride(from: 50, to: 3_000, by: 100).map {
            QuantitySample(
                type: .heartRate, start: Instant(milliseconds: Int64($0) * 1000 + 500),
                end: Instant(milliseconds: Int64($0) * 1000 + 500), value: 70, source: Source(identifier: "app"))
        }
        _ = try await store.save(series, as: .owner)
        _ = try await store.save(appSamples, as: .app("app"))
        var query = SampleQuery(type: .heartRate, limit: 700)
        var seen: [QuantitySample] = []
        while true {
            let page = try await store.samples(query, as: .owner)
            seen += page.samples
            guard let next = page.next else { break }
            query.cursor = next
        }
        #expect(seen.count == 3_030)
        #expect(seen.map(\.start) == seen.map(\.start).sorted())
        #expect(Set(seen.map(\.id)).count == 3_030)
        // An owner sample with an explicit id but the natural key of a chunked one is the same measurement.
        var again = heartRate(10, 70)
        again.id = UUID()
        #expect(try await store.save([again], as: .owner) == [.duplicate])
        // Deleting a chunked sample by id works and leaves a tombstone.
        #expect(try await store.delete([series[1_234].id], as: .owner) == 1)
        let remaining = try await store.samples(
            SampleQuery(type: .heartRate, from: Instant(seconds: 1_234), to: Instant(seconds: 1_235)), as: .owner)
        #expect(remaining.samples.isEmpty)
        // Writing everything again changes nothing but restores the deleted one.
        let outcomes = try await store.save(series, as: .owner)
        #expect(outcomes.filter { $0 == .inserted }.count == 1)
        #expect(outcomes.filter { $0 == .duplicate }.count == 2_999)
    }

    @Test(arguments: Engine.allCases) func longRangeStatisticsFromRollupsMatchTheExactSweep(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        // Three days, one reading a minute from two devices, some rows from an app, then deletions.
        let day: Int64 = 86_400
        let minutes = 3 * 1_440
        var strap: [QuantitySample] = []
        var watch: [QuantitySample] = []
        for minute in 0..<minutes {
            let second = Int64(minute) * 60
            strap.append(heartRate(second, 50 + Double((minute * 7) % 90)))
            watch.append(heartRate(second + 30, 60 + Double((minute * 11) % 70), device: Self.watch))
        }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        let app = (0..<50).map {
            QuantitySample(
                type: .heartRate, start: Instant(seconds: Int64($0) * 4_000 + 7),
                end: Instant(seconds: Int64($0) * 4_000 + 7),
                value: 120, source: Source(identifier: "app"))
        }
        _ = try await store.save(strap, as: .owner)
        _ = try await store.save(watch, as: .owner)
        _ = try await store.save(app, as: .app("app"))
        #expect(try await store.delete([strap[100].id, strap[2_000].id, app[3].id], as: .owner) == 3)

        let buckets = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1d"), timeZone: .gmt)
            .buckets(from: Instant(seconds: 0), to: Instant(seconds: 3 * day))
        for separate in [false, true] {
            let fast = try await store.statistics(
                StatisticsQuery(type: .heartRate, buckets: buckets, separateBySource: separate), as: .owner)
            let exact = try await store.statistics(
                StatisticsQuery(type: .heartRate, buckets: buckets, separateBySource: separate, exact: true), as: .owner
            )
            #expect(fast.count == exact.count)
            for (a, b) in zip(fast, exact) {
                #expect(a.provenance == b.provenance)
                #expect(a.discrete?.count == b.discrete?.count)
                #expect(nearlyEqual(a.discrete?.average, b.discrete?.average))
                #expect(a.discrete?.minimum == b.discrete?.minimum)
                #expect(a.discrete?.maximum == b.discrete?.maximum)
                #expect(a.discrete?.mostRecent == b.discrete?.mostRecent)
                #expect(a.discrete?.timeWeightedAverage == nil)
            }
        }
        // Filtered by source and by device, the rollups agree with the sweep too.
        let devices = try await store.statistics(
            StatisticsQuery(type: .heartRate, buckets: buckets, separateBySource: true, exact: true), as: .owner
        ).compactMap { $0.provenance?.device }
        #expect(Set(devices).count == 2)
        for (sources, devices) in [(["app"], nil), (nil, [devices.sorted()[0]]), (["app", "nobody"], [String]?.none)] {
            let fast = try await store.statistics(
                StatisticsQuery(type: .heartRate, buckets: buckets, sources: sources, devices: devices), as: .owner)
            let exact = try await store.statistics(
                StatisticsQuery(
                    type: .heartRate, buckets: buckets, sources: sources, devices: devices, exact: true), as: .owner)
            #expect(fast.map { $0.discrete?.count } == exact.map { $0.discrete?.count })
            #expect(fast.map { $0.discrete?.maximum } == exact.map { $0.discrete?.maximum })
            #expect(fast.contains { ($0.discrete?.count ?? 0) > 0 })
        }
        let total = try await store.statistics(StatisticsQuery(type: .heartRate, buckets: buckets), as: .owner)
        let counted = total.map { $0.discrete?.count ?? 0 }.reduce(0, +)
        #expect(counted == 2 * minutes + 50 - 3)
    }

    @Test(arguments: Engine.allCases) func retentionPrunesOldSamplesChunksAndRollups(_ engine: Engine) async throws {
        let now = Instant(seconds: 10 * 86_400)
        let (store, storage) = try makeStore(engine, now: { now })
        defer { storage.remove() }
        // Ten days, one reading every ten minutes (chunks), plus app rows on each day.
        let readings = (0..<1_440).map { heartRate(Int64($0) * 600, 60 + Double($0 % 30)) }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        let rows = (0..<10).map {
            QuantitySample(
                type: .heartRate, start: Instant(seconds: Int64($0) * 86_400 + 1),
                end: Instant(seconds: Int64($0) * 86_400 + 1),
                value: 99, source: Source(identifier: "app"))
        }
        _ = try await store.save(readings, as: .owner)
        _ = try await store.save(rows, as: .app("app"))
        try await store.setRetention(of: .heartRate, days: 3)
        #expect(try await store.retention() == ["heartRate": 3])
        // Keep samples that ended at or after day 7 (a cutoff in the middle of a chunk).
        let pruned: Int = 7 * 144 + 7
        // A rehearsal counts exactly what pruning deletes, and deletes nothing.
        #expect(try await store.pruneCount() == pruned)
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 1_450)
        #expect(try await store.prune() == pruned)
        #expect(try await store.pruneCount() == 0)
        let left = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(left.count == 3 * 144 + 3)
        #expect(left.allSatisfy { $0.end.milliseconds >= 7 * 86_400_000 })
        let buckets = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1d"), timeZone: .gmt)
            .buckets(from: Instant(seconds: 0), to: now)
        let fromRollups = try await store.statistics(StatisticsQuery(type: .heartRate, buckets: buckets), as: .owner)
        #expect(fromRollups.map { $0.discrete?.count ?? 0 } == [0, 0, 0, 0, 0, 0, 0, 145, 145, 145])
        try await store.setRetention(of: .heartRate, days: nil)
        #expect(try await store.retention().isEmpty)
    }

    /// Pruning also drops access-log entries older than 400 days (`docs/store-semantics.md`), writes' and reads'
    /// alike, whatever the samples' retention.
    @Test(arguments: Engine.allCases) func pruningDropsAccessLogEntriesOlderThan400Days(_ engine: Engine) async throws {
        let clock = Mutex(Instant(seconds: 1_700_000_000))
        let (store, storage) = try makeStore(engine, now: { clock.withLock { $0 } })
        defer { storage.remove() }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        let at = Instant(seconds: 1)
        _ = try await store.save(
            [QuantitySample(type: .heartRate, start: at, end: at, value: 60, source: Source(identifier: "app"))],
            as: .app("app"))
        _ = try await store.samples(SampleQuery(type: .heartRate), as: .app("app"))
        clock.withLock { $0 = Instant(seconds: 1_700_000_000 + 400 * 86_400 + 120) }
        _ = try await store.samples(SampleQuery(type: .heartRate), as: .app("app"))
        #expect(try await store.accessLog(limit: 100).count >= 3)
        #expect(try await store.prune() == 0)
        let left = try await store.accessLog(limit: 100)
        #expect(left.map(\.operation) == [.query])
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 1)
    }
}
