import Foundation
import Health
import StoreEngine
import Testing

/// HealthKit's kinds beyond quantities: category samples and characteristics, on both engines.
extension StoreConformanceTests {
    static let sleepApp = Source(identifier: "com.example.sleep")

    /// A sleep analysis sample from `from` to `to` (seconds) with the value named `stage`.
    static func sleep(_ stage: String, _ from: Int64, _ to: Int64, source: Source = sleepApp) -> QuantitySample {
        QuantitySample(
            type: .sleepAnalysis, start: Instant(seconds: from), end: Instant(seconds: to),
            value: Double(HealthType.sleepAnalysis.value(named: stage) ?? -1), source: source)
    }

    @Test(arguments: Engine.allCases) func categorySamplesAreStoredQueriedAndDeleted(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let night = [
            Self.sleep("inBed", 0, 600), Self.sleep("asleepCore", 600, 3_600), Self.sleep("asleepDeep", 3_600, 5_400),
            Self.sleep("asleepREM", 5_400, 7_200), Self.sleep("awake", 7_200, 7_500),
        ]
        #expect(try await store.save(night, as: .owner) == Array(repeating: .inserted, count: 5))
        #expect(try await store.save(night, as: .owner) == Array(repeating: .duplicate, count: 5))
        let stored = try await store.samples(SampleQuery(type: .sleepAnalysis), as: .owner).samples
        #expect(stored.map(\.value) == [0, 3, 4, 5, 2])
        #expect(
            stored.map { HealthType.sleepAnalysis.name(of: Int($0.value)) } == [
                "inBed", "asleepCore", "asleepDeep", "asleepREM", "awake",
            ])
        // A value outside the enumeration rejects the batch, naming type and value.
        var bad = Self.sleep("awake", 8_000, 9_000)
        bad.value = 9
        await #expect(throws: InvalidSampleError.self) {
            try await store.save([Self.sleep("awake", 9_000, 9_100), bad], as: .owner)
        }
        do {
            _ = try await store.save([bad], as: .owner)
        } catch let error as InvalidSampleError {
            #expect(error.description.contains("sleepAnalysis value 9.0 is not one of its values"))
        }
        // A characteristic, correlation or workout is not a sample.
        let birth = QuantitySample(
            type: .dateOfBirth, start: Instant(seconds: 0), end: Instant(seconds: 0), value: 0, source: Self.sleepApp)
        await #expect(throws: InvalidSampleError.self) { try await store.save([birth], as: .owner) }
        #expect(try await store.samples(SampleQuery(type: .sleepAnalysis), as: .owner).samples.count == 5)
        #expect(try await store.delete([stored[0].id], as: .owner) == 1)
        let changes = try await store.changes(of: .sleepAnalysis, since: nil, limit: 100, as: .owner)
        #expect(changes.added.count == 4)
        #expect(changes.deleted == [stored[0].id])
    }

    @Test(arguments: Engine.allCases) func categoryStatisticsGiveTimeAndCountPerValue(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let watch = Source(identifier: "com.example.watch")
        // Night one spans midnight (day borders at 0 and 86,400 s); the watch saw part of the same deep sleep.
        _ = try await store.save(
            [
                Self.sleep("inBed", 79_200, 82_800), Self.sleep("asleepDeep", 82_800, 90_000),
                Self.sleep("asleepDeep", 86_400, 88_200, source: watch), Self.sleep("awake", 90_000, 90_900),
                Self.sleep("asleepREM", 93_600, 97_200),
            ], as: .owner)
        let buckets = try StatisticsBuckets(interval: StatisticsInterval(parsing: "1d"), timeZone: .gmt)
            .buckets(from: Instant(seconds: 0), to: Instant(seconds: 2 * 86_400))
        let results = try await store.statistics(StatisticsQuery(type: .sleepAnalysis, buckets: buckets), as: .owner)
        #expect(results.count == 2)
        func entry(_ result: StatisticsResult?, _ stage: String) -> CategoryStatistics.Value? {
            result?.categories.first { $0.value == HealthType.sleepAnalysis.value(named: stage) }
        }
        // Day one: an hour in bed, an hour of deep sleep before midnight.
        #expect(entry(results.first, "inBed") == .init(value: 0, milliseconds: 3_600_000, count: 1))
        #expect(entry(results.first, "asleepDeep") == .init(value: 4, milliseconds: 3_600_000, count: 1))
        // Day two: the deep sleep's second hour, the watch's overlapping half hour counted once; awake a
        // quarter hour; an hour of REM.
        let second = results.last
        #expect(entry(second, "asleepDeep") == .init(value: 4, milliseconds: 3_600_000, count: 2))
        #expect(entry(second, "awake")?.milliseconds == 900_000)
        #expect(entry(second, "asleepREM")?.hours == 1)
        #expect(entry(second, "inBed") == nil)
        // Separated by source, each source's own time.
        let bySource = try await store.statistics(
            StatisticsQuery(type: .sleepAnalysis, buckets: buckets, separateBySource: true), as: .owner)
        let watchDay = bySource.first { $0.provenance?.source == watch.identifier }
        #expect(entry(watchDay, "asleepDeep") == .init(value: 4, milliseconds: 1_800_000, count: 1))
        // An app that may not read sleep sees only the statistics of the samples it wrote.
        try await store.setAuthorization(
            app: watch.identifier, [TypeAuthorization(type: "sleepAnalysis", read: false, share: true)])
        _ = try await store.save([Self.sleep("awake", 100_000, 100_600, source: watch)], as: .app(watch.identifier))
        let own = try await store.statistics(
            StatisticsQuery(type: .sleepAnalysis, buckets: buckets), as: .app(watch.identifier))
        #expect(own.first?.categories == [])
        #expect(own.last?.categories == [.init(value: 2, milliseconds: 600_000, count: 1)])
    }

    @Test(arguments: Engine.allCases) func characteristicsAreTheOwnersAndReadWithAGrant(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        #expect(try await store.characteristics(of: nil, as: .owner) == Characteristics())
        let birth = try Characteristics.Value(parsing: "1990-02-02", for: .dateOfBirth)
        try await store.setCharacteristic(.dateOfBirth, to: birth, of: nil, as: .owner)
        try await store.setCharacteristic(
            .bloodType, to: try Characteristics.Value(parsing: "AB+", for: .bloodType), of: nil, as: .owner)
        try await store.setCharacteristic(
            .biologicalSex, to: try Characteristics.Value(parsing: "female", for: .biologicalSex), of: "alice",
            as: .owner)
        let mine = try await store.characteristics(of: nil, as: .owner)
        #expect(mine.dateOfBirth == (try LocalDateTime(year: 1990, month: 2, day: 2)))
        #expect(mine.bloodType == .abPositive)
        #expect(mine.biologicalSex == .notSet)
        #expect(try await store.characteristics(of: "alice", as: .owner).biologicalSex == .female)
        // Setting again replaces; unsetting removes.
        try await store.setCharacteristic(
            .bloodType, to: try Characteristics.Value(parsing: "oNegative", for: .bloodType), of: nil, as: .owner)
        #expect(try await store.characteristics(of: nil, as: .owner).bloodType == .oNegative)
        try await store.setCharacteristic(.bloodType, to: nil, of: nil, as: .owner)
        #expect(try await store.characteristics(of: nil, as: .owner).values.keys.sorted() == ["dateOfBirth"])

        // An app reads only what it was granted; the rest looks exactly as if never set.
        let app = Caller.app("com.example.age")
        #expect(try await store.characteristics(of: nil, as: app) == Characteristics())
        try await store.setAuthorization(
            app: "com.example.age", [TypeAuthorization(type: "dateOfBirth", read: true, share: true)])
        let granted = try await store.characteristics(of: nil, as: app)
        #expect(granted.values.keys.sorted() == ["dateOfBirth"])
        #expect(try await store.characteristics(of: "alice", as: app) == Characteristics())
        // Never written by apps, whatever their grants.
        await #expect(throws: NotAuthorizedError.self) {
            try await store.setCharacteristic(.dateOfBirth, to: birth, of: nil, as: app)
        }
        let log = try await store.accessLog(limit: 50)
        #expect(log.contains { $0.caller == app && $0.operation == .save && $0.denied && $0.type == "dateOfBirth" })
        #expect(log.contains { $0.caller == app && $0.operation == .query && $0.denied && $0.type == "bloodType" })

        // Kept across reopening.
        let reopened = try storage.reopen()
        #expect(try await reopened.characteristics(of: nil, as: .owner).dateOfBirth == birth.dateValue)
    }
}

extension Characteristics.Value {
    var dateValue: LocalDateTime? {
        if case .date(let date) = self { return date }
        return nil
    }
}

extension StoreConformanceTests {
    /// The people picker's list: the subjects of samples and series, of characteristics and of sensors, each once,
    /// sorted; the owner's own person ('') is not a name.
    @Test(arguments: Engine.allCases) func subjectsAreListedFromEverywhere(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        #expect(try await store.subjects() == [])
        var sample = Self.sleep("asleepCore", 0, 600)
        sample.subject = "carol"
        var other = Self.sleep("asleepDeep", 600, 1_200)
        other.subject = "alice"
        let own = Self.sleep("awake", 1_200, 1_300)
        _ = try await store.save([sample, other, own], as: .owner)
        try await store.setCharacteristic(.bloodType, to: .enumerated(1), of: "bob", as: .owner)
        try await store.setCharacteristic(.bloodType, to: .enumerated(2), of: nil, as: .owner)
        try await store.register(
            RegisteredSensor(address: "AA:BB:CC:DD:EE:01", subject: "dave", enrolledAt: Instant(seconds: 0)))
        try await store.register(
            RegisteredSensor(address: "AA:BB:CC:DD:EE:02", subject: "alice", enrolledAt: Instant(seconds: 0)))
        #expect(try await store.subjects() == ["alice", "bob", "carol", "dave"])
    }
}
