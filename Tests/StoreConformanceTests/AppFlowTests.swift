import DBus
import Foundation
import Health
import HealthBus
import Support
import TestSupport
import Testing
import WearhouseClient

/// Issue 16's three app flows through `WearhouseClient` against a HealthBus server, on each engine (docs/app-flows.md
/// shows each with `busctl` and the CLI):
/// - a health app asks for its types, saves a height in metres and one in inches (converted with `HealthUnit`), a
///   weight, steps and distance over an interval, active energy, a heart rate and a night's sleep, reads the hours
///   per stage, and the date of birth to show an age;
/// - a step reader reads a day of steps from two sources (hundreds of samples), newest first by start then end, in
///   pages; learns from `Types` that a stand hour of 1 is idle; finds who wrote the steps, and gets the merged total,
///   not the sum, which follows the person's priority;
/// - a weight app saves body mass and body fat, reads a window with a strict start oldest first without a limit,
///   a statistics collection per day, deletes a sample and "updates" one by deleting and saving.
@Suite struct AppFlowTests {
    static let night: Int64 = 1_735_686_000_000  // 2024-12-31T23:00:00Z

    /// Runs `flow` with a client of a HealthBus server (the service's code) on a private bus over a fresh store of
    /// `engine`; the client is the app `unit`, and `store` is the owner's own connection (the CLI's).
    static func withService(
        _ engine: Engine, unit: String,
        _ flow: (_ client: HealthClient, _ store: any HealthStore, _ app: String) async throws -> Void
    ) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        var settings = HealthBusServer.Settings()
        settings.identify = { _, uid, _ in AppIdentity(uid: uid, unit: unit) }
        let serverConnection = try await DBusConnection.connect(to: .address(bus.address))
        let server = try await HealthBusServer.start(
            on: serverConnection, store: try storage.reopen(), settings: settings, log: .disabled)
        let client = try await HealthClient.connect(to: .address(bus.address), timeout: .seconds(20))
        do {
            try await flow(client, store, try await client.identity().app)
        } catch {
            await client.close()
            await server.stop()
            await serverConnection.close()
            throw error
        }
        await client.close()
        await server.stop()
        await serverConnection.close()
    }

    @Test(arguments: Engine.allCases) func anAppSavesReadsAndShowsAnAge(_ engine: Engine) async throws {
        try await Self.withService(engine, unit: "com.example.health") { client, store, app in
            let types: [HealthType] = [
                .height, .bodyMass, .stepCount, .distanceWalkingRunning, .activeEnergyBurned, .heartRate,
                .sleepAnalysis,
            ]
            #expect(try await client.requestAuthorization(read: types + [.dateOfBirth], write: types).pending)
            try await store.setAuthorization(
                app: app,
                types.map { TypeAuthorization(type: $0.identifier, read: true, share: true) } + [
                    TypeAuthorization(type: "dateOfBirth", read: true, share: false)
                ])
            func at(_ minutes: Int64) -> Instant { Instant(milliseconds: Self.night + minutes * 60_000) }
            let me = Source(identifier: app)
            let inches = try HealthUnit("in").convert(70, to: HealthUnit("m"))
            let saved = try await client.save([
                QuantitySample(type: .height, start: at(0), end: at(0), value: 1.80, source: me),
                QuantitySample(type: .height, start: at(1_440), end: at(1_440), value: inches, source: me),
                QuantitySample(type: .bodyMass, start: at(0), end: at(0), value: 72.5, source: me),
                QuantitySample(type: .stepCount, start: at(0), end: at(10), value: 1_200, source: me),
                QuantitySample(type: .distanceWalkingRunning, start: at(0), end: at(10), value: 900, source: me),
                QuantitySample(type: .activeEnergyBurned, start: at(0), end: at(10), value: 55, source: me),
                QuantitySample(type: .heartRate, start: at(10), end: at(10), value: 72, source: me),
                QuantitySample(type: .sleepAnalysis, start: at(60), end: at(180), value: 3, source: me),
                QuantitySample(type: .sleepAnalysis, start: at(180), end: at(240), value: 4, source: me),
            ])
            #expect(saved == Array(repeating: .inserted, count: 9))
            let heights = try await client.samples(SampleQuery(type: .height)).samples.compactMap { sample in
                if case .quantity(let quantity) = sample { return quantity.value }
                return nil
            }
            #expect(heights == [1.80, 1.778])
            let steps = try await client.statistics(of: .stepCount, from: at(0), to: at(60))
            #expect(steps.sum == 1_200)
            let stages = try await client.statistics(of: .sleepAnalysis, from: at(0), to: at(24 * 60))
            #expect(
                stages.categories == [
                    .init(value: 3, milliseconds: 7_200_000, count: 1),
                    .init(value: 4, milliseconds: 3_600_000, count: 1),
                ])
            #expect(try await client.dateOfBirth() == nil)
            try await store.setCharacteristic(
                .dateOfBirth, to: try Characteristics.Value(parsing: "1990-01-01", for: .dateOfBirth), of: nil,
                as: .owner)
            #expect(try await client.dateOfBirth() == (try LocalDateTime(year: 1990, month: 1, day: 1)))
            #expect(try await client.age(at: at(30), timeZone: "America/New_York") == 34)
            #expect(try await client.age(at: at(30), timeZone: "Europe/Berlin") == 35)
        }
    }

    static let midnight: Int64 = 1_735_689_600_000  // 2025-01-01T00:00:00Z

    @Test(arguments: Engine.allCases) func aStepReaderReadsADayFromTwoSourcesMerged(_ engine: Engine) async throws {
        try await Self.withService(engine, unit: "com.example.steps") { client, store, app in
            let types: [HealthType] = [.stepCount, .appleStandHour, .workout]
            #expect(try await client.requestAuthorization(read: types, write: types).pending)
            try await store.setAuthorization(
                app: app, types.map { TypeAuthorization(type: $0.identifier, read: true, share: true) })

            // What the types are: steps are counted and added up; a stand hour's 1 means idle, not stood.
            let described = Dictionary(
                uniqueKeysWithValues: try await client.types().map { ($0.identifier, $0) })
            #expect(described["stepCount"]?.kind == .quantity)
            #expect(described["stepCount"]?.aggregation == "cumulative")
            #expect(described["stepCount"]?.unit == "count")
            #expect(described["appleStandHour"]?.kind == .category)
            #expect(described["appleStandHour"]?.values.map(\.name) == ["stood", "idle"])
            #expect(described["appleStandHour"]?.values.first { $0.value == 1 }?.name == "idle")
            #expect(described["dateOfBirth"]?.kind == .characteristic)

            // A day: the watch (through the gateway) counts every 5 minutes, the phone app every 15; they count the
            // same steps.
            func at(_ minutes: Int64) -> Instant { Instant(milliseconds: Self.midnight + minutes * 60_000) }
            let watch = Source(identifier: "com.example.watch")
            let wrist = Device(name: "Watch", manufacturer: "Example", localIdentifier: "C7:00:00:00:00:09")
            let watchSteps = (0..<288).map { index in
                QuantitySample(
                    type: .stepCount, start: at(Int64(index) * 5), end: at(Int64(index) * 5 + 5), value: 100,
                    source: watch, device: wrist)
            }
            #expect(try await store.save(watchSteps, as: .owner).allSatisfy { $0 == .inserted })
            let me = Source(identifier: app)
            for hours in stride(from: 0, to: 24, by: 8) {
                let batch = (hours * 4..<(hours + 8) * 4).map { index in
                    QuantitySample(
                        type: .stepCount, start: at(Int64(index) * 15), end: at(Int64(index) * 15 + 15), value: 290,
                        source: me)
                }
                #expect(try await client.save(batch).allSatisfy { $0 == .inserted })
            }
            var stands: [QuantitySample] = []
            for hour: Int64 in 0..<24 {
                let value: Double = hour % 3 == 0 ? 0 : 1
                stands.append(
                    QuantitySample(
                        type: .appleStandHour, start: at(hour * 60), end: at(hour * 60 + 60), value: value, source: me))
            }
            #expect(try await client.save(stands).count == 24)

            // A swim: a workout has a duration (the pause left out), total energy, distance and strokes.
            let swim = Workout(
                activityType: .swimming, start: at(7 * 60), end: at(8 * 60), duration: 3_300, totalEnergyBurned: 480,
                totalDistance: 2_000, totalSwimmingStrokeCount: 1_150,
                events: [
                    WorkoutEvent(.pause, start: at(7 * 60 + 30)), WorkoutEvent(.resume, start: at(7 * 60 + 35)),
                ], source: me)
            #expect(try await client.save(swim) == .inserted)
            let workouts = try await client.workouts(SampleQuery(type: .workout, from: at(0), to: at(1_440)))
            #expect(workouts.workouts.count == 1)
            let read = try #require(workouts.workouts.first)
            #expect(read.activityType == .swimming)
            #expect(read.duration == 3_300)
            #expect(read.totalEnergyBurned == 480)
            #expect(read.totalDistance == 2_000)
            #expect(read.totalSwimmingStrokeCount == 1_150)
            #expect(read.events.map(\.kind) == [.pause, .resume])

            // Newest first by start, then by end (HealthKit's two sort descriptors), 50 a page: the whole day is
            // 384 samples; where both start at a quarter hour, the phone's longer sample ends later and comes first.
            let newest = SampleQuery(
                type: .stepCount, from: at(0), to: at(1_440),
                sort: [SampleSortDescriptor(.start, ascending: false), SampleSortDescriptor(.end, ascending: false)],
                limit: 50)
            var day: [QuantitySample] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await client.samples(newest, cursor: cursor)
                day += page.samples.compactMap { sample in
                    if case .quantity(let quantity) = sample { return quantity }
                    return nil
                }
                cursor = page.cursor
                pages += 1
            } while cursor != nil && pages < 100
            #expect(day.count == 384)
            #expect(pages == 8)
            #expect(day.first?.start == at(1_435))
            #expect(day.first?.source == watch)
            let quarter = day.filter { $0.start == at(1_425) }
            #expect(quarter.map(\.source.identifier) == [app, watch.identifier])
            #expect(quarter.map(\.end) == [at(1_440), at(1_430)])
            #expect(day.map(\.start) == day.map(\.start).sorted(by: >))

            // Stand hours come back with their names' numbers: 16 idle hours, 8 stood.
            let standing = try await client.statistics(of: .appleStandHour, from: at(0), to: at(1_440))
            #expect(standing.categories.map(\.value) == [0, 1])
            #expect(standing.categories.map(\.count) == [8, 16])

            // Who wrote the steps: the watch with its device, and this app.
            let sources = try await client.sources(of: .stepCount)
            #expect(sources.map(\.provenance.source) == [app, watch.identifier].sorted())
            #expect(sources.first { $0.provenance.source == watch.identifier }?.count == 288)
            #expect(sources.first { $0.provenance.source == watch.identifier }?.deviceName == "Watch")
            #expect(sources.first { $0.provenance.source == app }?.count == 96)

            // Two sources are merged, not added: 28,800 from the watch, 27,840 from the phone, never 56,640. With
            // no priority the later write wins where they overlap; the person ranks the watch first and the total
            // follows.
            let separate = try await client.statisticsCollection(
                of: .stepCount, from: at(0), to: at(1_440), interval: "1d",
                options: ["separateBySource": .boolean(true)])
            #expect(separate.compactMap(\.sum).sorted() == [27_840, 28_800])
            let unranked = try await client.statistics(of: .stepCount, from: at(0), to: at(1_440))
            #expect(unranked.sum == 27_840)
            try await client.setPriority(
                of: .stepCount,
                SourcePriority(order: [Provenance(source: watch.identifier, device: Provenance.anyDevice)]))
            #expect(
                try await client.priorities()["stepCount"]?.order == [
                    Provenance(source: watch.identifier, device: Provenance.anyDevice)
                ])
            let ranked = try await client.statistics(of: .stepCount, from: at(0), to: at(1_440))
            #expect(ranked.sum == 28_800)
            #expect(ranked.sources == ["\(watch.identifier)[\(wrist.key)]"])
            try await client.resetPriority(of: .stepCount)
            #expect(try await client.priorities().isEmpty)
            #expect(try await client.statistics(of: .stepCount, from: at(0), to: at(1_440)).sum == 27_840)
        }
    }

    @Test(arguments: Engine.allCases) func aWeightAppReadsAWindowPerDayAndUpdatesByDeleteAndSave(_ engine: Engine)
        async throws
    {
        try await Self.withService(engine, unit: "com.example.weight") { client, store, app in
            let bodyFat = try #require(HealthTypeCatalog.type("bodyFatPercentage"))
            let types: [HealthType] = [.bodyMass, bodyFat]
            #expect(try await client.requestAuthorization(read: types, write: types).pending)
            try await store.setAuthorization(
                app: app, types.map { TypeAuthorization(type: $0.identifier, read: true, share: true) })
            // Ten mornings at 07:00 Berlin time (06:00 UTC in winter), weight in kg and body fat as a fraction.
            func morning(_ day: Int64) -> Instant {
                Instant(milliseconds: Self.midnight + day * 86_400_000 + 6 * 3_600_000)
            }
            let me = Source(identifier: app)
            let weights = (0..<10).map { day in
                QuantitySample(
                    type: .bodyMass, start: morning(Int64(day)), end: morning(Int64(day)), startOffsetSeconds: 3_600,
                    value: 80 - Double(day) * 0.25, source: me)
            }
            let fat = (0..<10).map { day in
                QuantitySample(
                    type: bodyFat, start: morning(Int64(day)), end: morning(Int64(day)), startOffsetSeconds: 3_600,
                    value: 0.22 - Double(day) * 0.001, source: me)
            }
            #expect(try await client.save(weights + fat) == Array(repeating: .inserted, count: 20))
            // One weight entered by hand: found by its metadata key, and by its value.
            let typed = QuantitySample(
                type: .bodyMass, start: morning(10), end: morning(10), startOffsetSeconds: 3_600, value: 77,
                source: me, metadata: [MetadataKey.wasUserEntered: .bool(true)])
            #expect(try await client.save([typed]) == [.inserted])
            let entered = try await Self.all(
                client, SampleQuery(type: .bodyMass, metadata: [.exists(MetadataKey.wasUserEntered)]))
            #expect(entered.map(\.value) == [77])
            let enteredTrue = try await Self.all(
                client, SampleQuery(type: .bodyMass, metadata: [.equals(MetadataKey.wasUserEntered, .bool(true))]))
            #expect(enteredTrue.map(\.value) == [77])
            let handEntered = enteredTrue.map(\.id)
            #expect(try await client.delete(handEntered) == 1)
            // Body fat in percent as HealthKit's `%` unit: a fraction.
            let percent = try await client.samples(SampleQuery(type: bodyFat, limit: 1), unit: try HealthUnit("%"))
            #expect(percent.samples.first.map(Self.value) == 0.22)

            // The window from day 3 (strict start) to day 8, oldest first, no limit: all of it, in order.
            let window = try await Self.all(
                client,
                SampleQuery(type: .bodyMass, from: morning(3), to: morning(8), strictStart: true, ascending: true))
            #expect(window.map(\.value) == [79.25, 79, 78.75, 78.5, 78.25])
            #expect(window.map(\.start) == (3..<8).map { morning($0) })

            // A statistics collection per day in Berlin: each day's average is its weight.
            let days = try await client.statisticsCollection(
                of: .bodyMass, from: Instant(milliseconds: Self.midnight - 3_600_000),
                to: Instant(milliseconds: Self.midnight - 3_600_000 + 10 * 86_400_000), interval: "1d",
                timeZone: "Europe/Berlin")
            #expect(days.count == 10)
            #expect(days.map(\.average) == weights.map(\.value))
            #expect(days.allSatisfy { $0.count == 1 })

            // Delete one sample; "update" another by deleting it and saving the corrected value.
            let stored = try await Self.all(client, SampleQuery(type: .bodyMass))
            #expect(try await client.delete([stored[9].id]) == 1)
            #expect(try await client.delete([stored[9].id]) == 0)
            #expect(try await client.delete([stored[4].id]) == 1)
            var corrected = weights[4]
            corrected.value = 79.1
            #expect(try await client.save([corrected]) == [.inserted])
            let after = try await Self.all(client, SampleQuery(type: .bodyMass))
            #expect(after.count == 9)
            #expect(after.map(\.value) == weights.prefix(9).map { $0.start == morning(4) ? 79.1 : $0.value })
            #expect(after.first { $0.start == morning(4) }?.id == stored[4].id)
            let changes = try await client.changes(of: .bodyMass, since: 0)
            #expect(Set(changes.deleted) == Set([stored[9].id, stored[4].id] + handEntered))
        }
    }

    /// Every page of `query` through the client, as quantity samples.
    static func all(_ client: HealthClient, _ query: SampleQuery) async throws -> [QuantitySample] {
        var result: [QuantitySample] = []
        var cursor: String?
        repeat {
            let page = try await client.samples(query, cursor: cursor)
            result += page.samples.compactMap { sample in
                if case .quantity(let quantity) = sample { return quantity }
                return nil
            }
            cursor = page.cursor
        } while cursor != nil
        return result
    }

    static func value(_ sample: BusSample) -> Double? {
        if case .quantity(let quantity) = sample { return quantity.value }
        return nil
    }
}
