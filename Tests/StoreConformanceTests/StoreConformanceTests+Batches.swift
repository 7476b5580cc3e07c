import Foundation
import Health
import StoreEngine
import Support
import Synchronization
import TestSupport
import Testing

/// The gateway's columnar batches (``SampleBatch``) follow the rules of sample-by-sample saves exactly: the same
/// outcomes, the same stored samples, statistics and changes, whatever the batch holds.
extension StoreConformanceTests {
    /// Random writes (streams of several sensors and people, discrete and cumulative types, replays, conflicts,
    /// repeats inside a batch, samples out of order, an app's samples, client ids) saved into two stores, one
    /// through `save([QuantitySample])` and one through `save(SampleBatch)`.
    @Test(arguments: Engine.allCases) func batchesAndSampleValuesGiveTheSameStore(_ engine: Engine) async throws {
        let (bySample, first) = try makeStore(engine)
        defer { first.remove() }
        let (byBatch, second) = try makeStore(engine)
        defer { second.remove() }
        let app = "org.example.logger"
        for store in [bySample, byBatch] {
            try await store.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: true, share: true)])
        }
        var random = SplitMix64(seed: 0xBA7C_4E5)
        let devices = [Self.strap, Self.watch]
        let types: [HealthType] = [.heartRate, .stepCount, .activeEnergyBurned, .runningSpeed]
        var written: [QuantitySample] = []
        for round in 0..<40 {
            var batch = SampleBatch()
            var samples: [QuantitySample] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let type = types.randomElement(using: &random)!
                var stream = QuantitySeries(
                    type: type, startOffsetSeconds: 3_600, source: Self.gateway,
                    device: devices.randomElement(using: &random)!,
                    subject: ["alice", "bob"].randomElement(using: &random),
                    metadata: Bool.random(using: &random) ? [:] : [MetadataKey.sensorLocation: .number(2)])
                for _ in 0..<Int.random(in: 1...30, using: &random) {
                    if !written.isEmpty, Int.random(in: 0..<5, using: &random) == 0 {
                        // Written before: again (a replay) or with another value (a conflict), into its own stream.
                        let old = written.randomElement(using: &random)!
                        let value = Bool.random(using: &random) ? old.value : old.value + 1
                        var again = QuantitySeries(
                            type: old.type, startOffsetSeconds: old.startOffsetSeconds, source: old.source,
                            device: old.device, subject: old.subject, metadata: old.metadata)
                        again.append(start: old.start.milliseconds, end: old.end.milliseconds, value: value)
                        batch.append(again)
                        samples += again.samples
                        continue
                    }
                    let start = Int64(1_700_000_000_000) + Int64.random(in: 0..<7_200, using: &random) * 1_000
                    let end = type.aggregation == .cumulative ? start + 1_000 : start
                    let value = Double(Int.random(in: 1...180, using: &random))
                    stream.append(start: start, end: end, value: value)
                    if Int.random(in: 0..<10, using: &random) == 0 {
                        stream.append(start: start, end: end, value: value)
                    }
                }
                samples += stream.samples
                written += stream.samples
                batch.append(stream)
            }
            let bySampleOutcomes = try await bySample.save(samples, as: .owner)
            let byBatchOutcomes = try await byBatch.save(batch, as: .owner)
            #expect(byBatchOutcomes == bySampleOutcomes, "round \(round)")
            #expect(batch.samples == samples)
        }
        // An app's samples and a client's versioned sample go into rows, through either path.
        let appSample = QuantitySample(
            type: .heartRate, start: Instant(seconds: 1_700_000_100), end: Instant(seconds: 1_700_000_100), value: 64,
            source: Source(identifier: app))
        let versioned = QuantitySample(
            type: .stepCount, start: Instant(seconds: 1_700_000_000), end: Instant(seconds: 1_700_000_600), value: 500,
            source: Source(identifier: "org.example.walks"),
            metadata: [MetadataKey.externalUUID: .string("walk-7"), MetadataKey.syncVersion: .number(1)])
        #expect(try await bySample.save([appSample], as: .app(app)) == [.inserted])
        #expect(try await byBatch.save(SampleBatch([appSample]), as: .app(app)) == [.inserted])
        #expect(try await bySample.save([versioned], as: .owner) == [.inserted])
        #expect(try await byBatch.save(SampleBatch([versioned]), as: .owner) == [.inserted])

        for type in types {
            let query = SampleQuery(type: type)
            let left = try await bySample.samples(query, as: .owner).samples
            let right = try await byBatch.samples(query, as: .owner).samples
            // Ids of the versioned sample are new per save: compare everything else.
            #expect(left.map(Self.withoutID) == right.map(Self.withoutID), "\(type)")
            let buckets = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1h"), timeZone: .gmt)
                .buckets(from: Instant(seconds: 1_699_990_000), to: Instant(seconds: 1_700_010_000))
            let statistics = StatisticsQuery(type: type, buckets: buckets)
            #expect(
                try await bySample.statistics(statistics, as: .owner)
                    == byBatch.statistics(statistics, as: .owner), "\(type)")
            let leftChanges = try await bySample.changes(of: type, since: nil, limit: 100_000, as: .owner)
            let rightChanges = try await byBatch.changes(of: type, since: nil, limit: 100_000, as: .owner)
            #expect(leftChanges.added.count == rightChanges.added.count)
        }
    }

    @Test(arguments: Engine.allCases) func anInvalidSampleInABatchIsNamedByItsPlace(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var rates = QuantitySeries(type: .heartRate, source: Self.gateway, device: Self.strap, subject: "alice")
        rates.append(start: 1_000, end: 1_000, value: 60)
        rates.append(start: 2_000, end: 2_000, value: 61)
        var steps = QuantitySeries(type: .stepCount, source: Self.gateway, device: Self.strap, subject: "alice")
        steps.append(start: 1_000, end: 2_000, value: 3)
        steps.append(start: 2_000, end: 1_000, value: 3)  // ends before it starts
        var batch = SampleBatch()
        batch.append(rates)
        batch.append(steps)
        do {
            _ = try await store.save(batch, as: .owner)
            Issue.record("an invalid batch was saved")
        } catch let error as InvalidSampleError {
            #expect(error.index == 3)
        }
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.isEmpty)
        // Without share permission an app's batch is refused as a whole.
        await #expect(throws: NotAuthorizedError.self) {
            try await store.save(SampleBatch([rates.sample(at: 0)]), as: .app("x"))
        }
    }

    /// A batch is one transaction: when its heartbeat series fail after its samples were written (an explicit id
    /// naming another stored series is found only then), nothing of the batch is stored, and the error names the
    /// series by its place after the samples.
    @Test(arguments: Engine.allCases) func aBatchFailingInItsHeartbeatSeriesLeavesNothingOfIt(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var named = series(minute: 20)
        named.id = UUID()
        #expect(try await store.save([named], as: .owner) == [.inserted])
        var rates = QuantitySeries(type: .heartRate, source: Self.gateway, device: Self.strap, subject: "alice")
        rates.append(start: 1_000, end: 1_000, value: 60)
        rates.append(start: 2_000, end: 2_000, value: 61)
        var clash = series(minute: 21)
        clash.id = named.id
        var batch = SampleBatch()
        batch.append(rates)
        batch.heartbeats = [series(minute: 22), clash]
        do {
            _ = try await store.save(batch, as: .owner)
            Issue.record("a batch with a series id naming another series was saved")
        } catch let error as InvalidSampleError {
            #expect(error.index == 3)
        }
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.isEmpty)
        #expect(try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series == [named])
        // Without the clash, the same batch is saved whole.
        batch.heartbeats = [series(minute: 22)]
        #expect(try await store.save(batch, as: .owner) == [.inserted, .inserted, .inserted])
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 2)
    }

    /// A sparse stream (a sample a day for two months, in one chunk in SQLite) is found by a range that starts
    /// long after the stream does, and a late sample of it can be deleted by id.
    @Test(arguments: Engine.allCases) func aSparseStreamIsFoundByALateRangeAndDeletedByID(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var daily = QuantitySeries(type: .stepCount, source: Self.gateway, device: Self.strap, subject: "alice")
        let day: Int64 = 86_400_000
        for index in 0..<60 { daily.append(start: Int64(index) * day, end: Int64(index) * day + 3_600_000, value: 100) }
        var batch = SampleBatch()
        batch.append(daily)
        #expect(try await store.save(batch, as: .owner) == Array(repeating: .inserted, count: 60))
        let late = SampleQuery(
            type: .stepCount, from: Instant(milliseconds: 50 * day), to: Instant(milliseconds: 60 * day))
        let found = try await store.samples(late, as: .owner).samples
        #expect(found.map(\.start.milliseconds) == (50..<60).map { Int64($0) * day })
        let target = try #require(found.last)
        #expect(try await store.delete([target.id], as: .owner) == 1)
        #expect(try await store.samples(late, as: .owner).samples.count == 9)
        // An interval that began before the range and ends inside it is found too.
        let overlapping = SampleQuery(
            type: .stepCount, from: Instant(milliseconds: 10 * day + 1_800_000),
            to: Instant(milliseconds: 10 * day + 1_900_000))
        #expect(try await store.samples(overlapping, as: .owner).samples.count == 1)
    }

    /// Metadata that cannot be stored (a number that is not finite) is refused, not dropped.
    @Test(arguments: Engine.allCases) func aNonFiniteMetadataNumberRejectsTheSample(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var sample = heartRate(1_000, 70)
        sample.metadata["x"] = .number(.nan)
        await #expect(throws: InvalidSampleError.self) { try await store.save([sample], as: .owner) }
        await #expect(throws: InvalidSampleError.self) { try await store.save(SampleBatch([sample]), as: .owner) }
        let series = HeartbeatSeriesSample(
            start: Instant(seconds: 0), end: Instant(seconds: 1),
            beats: [Beat(offsetMilliseconds: 0, rrMilliseconds: 800)],
            source: Self.gateway, metadata: ["x": .quantity(.infinity, unit: "ms")])
        await #expect(throws: InvalidSampleError.self) { try await store.save([series], as: .owner) }
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.isEmpty)
    }

    /// `saveAll` (one transaction for every batch, as `import-samples` writes) gives each batch the outcomes it
    /// would have on its own, when later batches repeat, contradict and interleave with earlier ones: on PostgreSQL
    /// every batch goes through the same staging table inside that transaction.
    @Test(arguments: Engine.allCases) func saveAllCountsEachBatchAsItsOwnSave(_ engine: Engine) async throws {
        let (together, first) = try makeStore(engine)
        defer { first.remove() }
        let (apart, second) = try makeStore(engine)
        defer { second.remove() }
        var batches: [SampleBatch] = []
        var earlier: [QuantitySample] = []
        for round in 0..<5 {
            var samples: [QuantitySample] = []
            for index in 0..<50 {
                let start = Int64(1_700_000_000_000) + Int64(round * 50 + index) * 60_000
                samples.append(
                    QuantitySample(
                        type: index % 2 == 0 ? .stepCount : .heartRate, start: Instant(milliseconds: start),
                        end: Instant(milliseconds: index % 2 == 0 ? start + 60_000 : start), value: Double(index),
                        source: Self.gateway, device: Self.strap, subject: "alice"))
            }
            // Every earlier batch's samples again: most the same (duplicates), every seventh changed (conflicts).
            for (index, old) in earlier.enumerated() {
                var again = old
                if index % 7 == 0 { again.value += 1 }
                samples.append(again)
            }
            earlier += samples.prefix(50)
            batches.append(SampleBatch(samples))
        }
        let handed = batches
        let counter = Mutex(0)
        let counts = try await together.saveAll(as: .owner) {
            counter.withLock { next in
                defer { next += 1 }
                return next < handed.count ? handed[next] : nil
            }
        }
        var expected: [WriteOutcome: Int] = [:]
        for batch in batches {
            for outcome in try await apart.save(batch, as: .owner) { expected[outcome, default: 0] += 1 }
        }
        #expect(counts == expected)
        #expect(expected[.inserted] == 250 && (expected[.conflict] ?? 0) > 0 && (expected[.duplicate] ?? 0) > 0)
        for type in [HealthType.stepCount, .heartRate] {
            let query = SampleQuery(type: type)
            #expect(
                try await together.samples(query, as: .owner).samples
                    == (try await apart.samples(query, as: .owner)).samples)
        }
    }

    static func withoutID(_ sample: QuantitySample) -> QuantitySample {
        var copy = sample
        copy.id = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        return copy
    }
}

extension StoreConformanceTests {
    /// A batch's workouts are saved in its transaction: each with the batch's samples it names that were stored (an
    /// id of nothing stored is left out, not the workout), their outcomes after the samples'; an invalid workout
    /// refuses the whole batch, named by its place after the samples.
    @Test(arguments: Engine.allCases) func aBatchSavesItsWorkoutsWithTheirSamples(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let start: Int64 = 1_700_000_000_000
        var stream = QuantitySeries(
            type: .activeEnergyBurned, startOffsetSeconds: 0, source: Self.gateway, device: Self.strap, subject: nil)
        for minute in 0..<3 {
            stream.append(start: start + Int64(minute) * 60_000, end: start + Int64(minute + 1) * 60_000, value: 5)
        }
        let ride = Workout(
            activityType: .cycling, start: Instant(milliseconds: start), end: Instant(milliseconds: start + 180_000),
            totalEnergyBurned: 15, totalDistance: nil, events: [], source: Self.gateway, device: Self.strap,
            subject: nil)
        var batch = SampleBatch()
        batch.append(stream)
        let ids = stream.samples.map(\.id)
        batch.workouts = [SampleBatch.WorkoutEntry(ride, sampleIDs: ids + [UUID()])]

        // An invalid workout (ending before it starts) refuses everything, named after the batch's samples.
        var refused = batch
        var backwards = ride
        backwards.end = Instant(milliseconds: start - 1)
        refused.workouts = [SampleBatch.WorkoutEntry(backwards, sampleIDs: ids)]
        let error = await #expect(throws: InvalidSampleError.self) { try await store.save(refused, as: .owner) }
        #expect(error?.index == 3)
        #expect(try await store.samples(SampleQuery(type: .activeEnergyBurned), as: .owner).samples.isEmpty)

        let outcomes = try await store.save(batch, as: .owner)
        #expect(outcomes == [.inserted, .inserted, .inserted, .inserted])
        let stored = try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts
        #expect(stored.map(\.id) == [ride.id])
        let members = try await store.workoutSampleIDs(ride.id, as: .owner)
        #expect(Set(members["activeEnergyBurned"] ?? []) == Set(ids))
        // Again: duplicates, and no member twice.
        #expect(try await store.save(batch, as: .owner) == [.duplicate, .duplicate, .duplicate, .duplicate])
        #expect(try await store.workoutSampleIDs(ride.id, as: .owner)["activeEnergyBurned"]?.count == 3)
    }
}
