import Foundation
import Health
import StoreEngine
import Support
import TestSupport
import Testing

/// Random mixes of every kind the store keeps (quantity and category samples, heartbeat series, characteristics,
/// blood pressure correlations, workouts with events and associated samples),
/// saved by the owner and by apps, queried with random predicates and sort orders, merged under random priorities
/// and deleted, give the same answers on SQLite and PostgreSQL, step by step. Seeded: the seed is printed, and
/// `WEARHOUSE_PROPERTY_SEED=<n>` runs that one again.
@Suite struct CrossEnginePropertyTests {
    static let day0: Int64 = 1_743_206_400  // 2025-03-29T00:00Z, before Berlin's switch to summer time
    static let sources = [
        Source(identifier: "org.wearhouse.gateway"), Source(identifier: "com.example.watch"),
        Source(identifier: "com.example.phone"),
    ]
    static let apps = ["com.example.watch", "com.example.phone"]
    static let devices: [Device?] = [
        nil, Device(name: "Strap", localIdentifier: "A0:01"), Device(name: "Wrist", localIdentifier: "C7:02"),
    ]
    static let subjects: [String?] = [nil, "alice", "bob"]
    static let types: [HealthType] = [.stepCount, .heartRate, .bodyMass, .sleepAnalysis, .appleStandHour]

    /// One step of a run: what is done, and as whom.
    enum Step: CustomStringConvertible {
        case save([QuantitySample], Caller)
        case saveSeries([HeartbeatSeriesSample])
        case saveCorrelations([Correlation], Caller)
        case saveWorkouts([Workout], Caller)
        case addToWorkout([UUID], UUID, Caller)
        case queryObjects(SampleQuery, Caller)
        case workoutSamples(UUID, Caller)
        case query(SampleQuery, Caller)
        case querySeries(SampleQuery)
        case statistics(StatisticsQuery, Caller)
        case priority(HealthType?, SourcePriority?)
        case characteristic(HealthType, Characteristics.Value?, String?)
        case readCharacteristics(String?, Caller)
        case delete([UUID], Caller)
        case changes(HealthType, Caller)

        var description: String {
            switch self {
            case .save(let samples, let caller): "save \(samples.count) as \(caller)"
            case .saveSeries(let series): "save \(series.count) series"
            case .saveCorrelations(let correlations, let caller): "save \(correlations.count) correlations as \(caller)"
            case .saveWorkouts(let workouts, let caller): "save \(workouts.count) workouts as \(caller)"
            case .addToWorkout(let ids, let workout, let caller): "add \(ids.count) to \(workout) as \(caller)"
            case .queryObjects(let query, let caller): "query objects \(query) as \(caller)"
            case .workoutSamples(let workout, let caller): "samples of \(workout) as \(caller)"
            case .query(let query, let caller): "query \(query) as \(caller)"
            case .querySeries(let query): "query series \(query)"
            case .statistics(let query, let caller): "statistics \(query.type) \(query.buckets.count) as \(caller)"
            case .priority(let type, let priority):
                "priority \(type?.identifier ?? "*") \(priority?.description ?? "-")"
            case .characteristic(let type, let value, let subject):
                "set \(type) \(String(describing: value)) \(subject ?? "-")"
            case .readCharacteristics(let subject, let caller): "characteristics \(subject ?? "-") as \(caller)"
            case .delete(let ids, let caller): "delete \(ids.count) as \(caller)"
            case .changes(let type, let caller): "changes \(type) as \(caller)"
            }
        }
    }

    /// A random sample of a random type; values sometimes out of range (the batch is then refused on both).
    static func sample(_ random: inout SplitMix64, source: Source) -> QuantitySample {
        let type = random.pick(types)
        let start = Int64(random.next() % 2_880) * 60
        let length: Int64 =
            switch type {
            case .heartRate, .bodyMass: random.next() % 3 == 0 ? 0 : Int64(random.next() % 10) * 60
            default: Int64(1 + random.next() % 120) * 60
            }
        var value: Double
        switch type {
        case .stepCount: value = Double(random.next() % 2_000)
        case .heartRate: value = Double(40 + random.next() % 150)
        case .bodyMass: value = 60 + Double(random.next() % 400) / 10
        case .sleepAnalysis: value = Double(random.next() % 6)
        default: value = Double(random.next() % 2)
        }
        if random.next() % 200 == 0 { value = -1 }
        return QuantitySample(
            type: type, start: Instant(seconds: day0 + start), end: Instant(seconds: day0 + start + length),
            value: value, source: source, device: random.pick(devices), subject: random.pick(subjects))
    }

    static func series(_ random: inout SplitMix64) -> HeartbeatSeriesSample {
        let minute = Int64(random.next() % 2_880)
        var beats: [Beat] = []
        var offset = 0.0
        for index in 0..<(5 + Int(random.next() % 40)) {
            let rr = Double(700 + random.next() % 400)
            offset += rr
            beats.append(Beat(offsetMilliseconds: offset, rrMilliseconds: rr, precededByGap: index == 3))
        }
        return HeartbeatSeriesSample(
            start: Instant(seconds: day0 + minute * 60),
            end: Instant(milliseconds: (day0 + minute * 60) * 1_000 + Int64(offset.rounded(.up)) + 1),
            beats: beats, source: sources[0], device: random.pick(devices), subject: random.pick(subjects))
    }

    /// A blood pressure at a random minute; sometimes with a diastolic above its systolic or out of range.
    static func correlation(_ random: inout SplitMix64, source: Source) -> Correlation {
        let time = Instant(seconds: day0 + Int64(random.next() % 2_880) * 60)
        let systolic = Double(90 + random.next() % 60)
        let diastolic = random.next() % 30 == 0 ? 400 : Double(50 + random.next() % 40)
        return Correlation.bloodPressure(
            systolic: systolic, diastolic: diastolic, at: time, source: source, device: random.pick(devices),
            subject: random.pick(subjects))
    }

    /// A workout of up to two hours with a few events inside it and totals or not.
    static func workout(_ random: inout SplitMix64, source: Source) -> Workout {
        let start = day0 + Int64(random.next() % 2_880) * 60
        let end = start + Int64(10 + random.next() % 110) * 60
        let events = (0..<Int(random.next() % 4)).map { index in
            WorkoutEvent(
                random.pick([.pause, .resume, .lap, .marker]), start: Instant(seconds: start + Int64(index + 1) * 60))
        }
        return Workout(
            activityType: random.pick([.running, .walking, .cycling, .swimming]), start: Instant(seconds: start),
            end: Instant(seconds: end), totalEnergyBurned: random.next() % 2 == 0 ? nil : Double(random.next() % 900),
            totalDistance: random.next() % 2 == 0 ? nil : Double(random.next() % 20_000), events: events,
            source: source, device: random.pick(devices), subject: random.pick(subjects))
    }

    static func caller(_ random: inout SplitMix64) -> Caller {
        random.next() % 3 == 0 ? .owner : .app(random.pick(apps))
    }

    static func query(_ type: HealthType, _ random: inout SplitMix64) -> SampleQuery {
        let from = random.next() % 2 == 0 ? nil : Instant(seconds: day0 + Int64(random.next() % 2_880) * 60)
        let to = from.map { Instant(seconds: $0.milliseconds / 1_000 + Int64(1 + random.next() % 1_440) * 60) }
        var sort: [SampleSortDescriptor] = [
            SampleSortDescriptor(random.pick([.start, .end]), ascending: random.next() % 2 == 0)
        ]
        if random.next() % 2 == 0 {
            sort.append(SampleSortDescriptor(sort[0].key == .start ? .end : .start, ascending: random.next() % 2 == 0))
        }
        return SampleQuery(
            type: type, from: from, to: to, strictStart: random.next() % 4 == 0, strictEnd: random.next() % 4 == 0,
            sources: random.someOf(sources.map(\.identifier)),
            devices: random.someOf(devices.compactMap { $0?.key }), subjects: random.someOf(["alice", "bob"]),
            sort: sort, limit: random.next() % 2 == 0 ? nil : Int(1 + random.next() % 40))
    }

    /// The steps of one run: every sample saved is remembered, so that deletions name real ids.
    static func steps(seed: UInt64, count: Int) throws -> [Step] {
        var random = SplitMix64(seed: seed)
        var steps: [Step] = []
        var ids: [UUID] = []
        var workouts: [UUID] = []
        for _ in 0..<count {
            switch random.next() % 15 {
            case 0, 1, 2:
                let caller = caller(&random)
                let source: Source =
                    if case .app(let app) = caller { Source(identifier: app) } else { random.pick(sources) }
                let batch = (0..<(1 + Int(random.next() % 60))).map { _ in sample(&random, source: source) }
                ids += batch.map(\.id)
                steps.append(.save(batch, caller))
            case 3:
                let batch = (0..<(1 + Int(random.next() % 4))).map { _ in series(&random) }
                ids += batch.map(\.id)
                steps.append(.saveSeries(batch))
            case 4, 5:
                steps.append(.query(query(random.pick(types), &random), caller(&random)))
            case 6:
                steps.append(.querySeries(query(.heartbeatSeries, &random)))
            case 7:
                let type = random.pick(types)
                let interval = random.pick(["15m", "1h", "1d"])
                let zone = random.pick(["UTC", "Europe/Berlin"])
                let buckets = try StatisticsBuckets(
                    interval: StatisticsInterval(parsing: interval), timeZoneIdentifier: zone
                ).buckets(from: Instant(seconds: day0), to: Instant(seconds: day0 + 2 * 86_400))
                let unranked: CumulativeMerge.UnrankedPolicy? =
                    random.next() % 3 == 0 ? random.pick(CumulativeMerge.UnrankedPolicy.allCases) : nil
                steps.append(
                    .statistics(
                        StatisticsQuery(
                            type: type, buckets: buckets, subjects: random.someOf(["alice", "bob"]),
                            separateBySource: random.next() % 3 == 0, unranked: unranked,
                            exact: random.next() % 2 == 0), caller(&random)))
            case 8:
                let provenances = sources.flatMap { source in
                    devices.map { Provenance(source: source.identifier, device: $0?.key) }
                        + [Provenance(source: source.identifier, device: Provenance.anyDevice)]
                }
                var order: [Provenance] = []
                for provenance in provenances where random.next() % 3 == 0 { order.append(provenance) }
                let priority =
                    random.next() % 4 == 0
                    ? nil
                    : SourcePriority(order: order, unranked: random.pick(CumulativeMerge.UnrankedPolicy.allCases))
                steps.append(.priority(random.next() % 3 == 0 ? nil : .stepCount, priority))
            case 9:
                let type = random.pick(HealthTypeCatalog.types(of: .characteristic))
                let value: Characteristics.Value? =
                    switch type.identifier {
                    case "dateOfBirth":
                        .date(try LocalDateTime(year: 1950 + Int(random.next() % 60), month: 3, day: 7))
                    default: random.next() % 5 == 0 ? nil : .enumerated(Int(1 + random.next() % 4))
                    }
                steps.append(.characteristic(type, value, random.pick(subjects)))
                steps.append(.readCharacteristics(random.pick(subjects), caller(&random)))
            case 11:
                let caller = caller(&random)
                let source: Source =
                    if case .app(let app) = caller { Source(identifier: app) } else { random.pick(sources) }
                if random.next() % 2 == 0 {
                    let batch = (0..<(1 + Int(random.next() % 4))).map { _ in correlation(&random, source: source) }
                    ids += batch.map(\.id) + batch.flatMap { $0.objects.map(\.id) }
                    steps.append(.saveCorrelations(batch, caller))
                } else {
                    let batch = (0..<(1 + Int(random.next() % 3))).map { _ in workout(&random, source: source) }
                    ids += batch.map(\.id)
                    workouts += batch.map(\.id)
                    steps.append(.saveWorkouts(batch, caller))
                }
            case 12:
                guard !workouts.isEmpty, !ids.isEmpty else { continue }
                // Mostly the owner, who may add to any workout, and few ids, so that most of them name a sample.
                let chosen = (0..<(1 + Int(random.next() % 2))).map { _ in random.pick(ids) }
                let adder: Caller = random.next() % 3 == 0 ? caller(&random) : .owner
                let target = random.pick(workouts)
                steps.append(.addToWorkout(chosen, target, adder))
                steps.append(.workoutSamples(target, caller(&random)))
            case 13:
                steps.append(.queryObjects(query(random.pick([.bloodPressure, .workout]), &random), caller(&random)))
            case 10:
                guard !ids.isEmpty else { continue }
                let chosen = (0..<(1 + Int(random.next() % 8))).map { _ in random.pick(ids) }
                steps.append(.delete(chosen, caller(&random)))
            default:
                let kinds = types + [.heartbeatSeries, .bloodPressure, .workout, .bloodPressureSystolic]
                steps.append(.changes(random.pick(kinds), caller(&random)))
            }
        }
        return steps
    }

    /// What a step answers, as a value both engines must agree on (errors by their type).
    static func run(_ step: Step, on store: any HealthStoreEngine) async -> String {
        do {
            switch step {
            case .save(let samples, let caller):
                return "\(try await store.save(samples, as: caller))"
            case .saveSeries(let series):
                return "\(try await store.save(series, as: .owner))"
            case .saveCorrelations(let correlations, let caller):
                return "\(try await store.save(correlations, as: caller))"
            case .saveWorkouts(let workouts, let caller):
                return "\(try await store.save(workouts, as: caller))"
            case .addToWorkout(let ids, let workout, let caller):
                return "\(try await store.add(ids, to: workout, as: caller))"
            case .workoutSamples(let workout, let caller):
                let found = try await store.workoutSampleIDs(workout, as: caller)
                return "\(found.sorted { $0.key < $1.key }.map { ($0.key, $0.value.map(\.uuidString).sorted()) })"
            case .queryObjects(let query, let caller):
                var query = query
                var pages: [String] = []
                repeat {
                    if query.type == .workout {
                        let page = try await store.workouts(query, as: caller)
                        pages.append("\(page.workouts)")
                        query.cursor = page.next
                    } else {
                        let page = try await store.correlations(query, as: caller)
                        pages.append("\(page.correlations)")
                        query.cursor = page.next
                    }
                } while query.cursor != nil && pages.count < 500
                return "\(pages)"
            case .query(let query, let caller):
                var query = query
                var pages: [[QuantitySample]] = []
                repeat {
                    let page = try await store.samples(query, as: caller)
                    pages.append(page.samples)
                    query.cursor = page.next
                } while query.cursor != nil && pages.count < 500
                return "\(pages)"
            case .querySeries(let query):
                var query = query
                var pages: [[HeartbeatSeriesSample]] = []
                repeat {
                    let page = try await store.heartbeatSeries(query, as: .owner)
                    pages.append(page.series)
                    query.cursor = page.next
                } while query.cursor != nil && pages.count < 500
                return "\(pages)"
            case .statistics(let query, let caller):
                return try await store.statistics(query, as: caller).map(rounded).description
            case .priority(let type, let priority):
                try await store.setPriority(of: type, priority)
                return "\(try await store.priorities().sorted { $0.key < $1.key })"
            case .characteristic(let type, let value, let subject):
                try await store.setCharacteristic(type, to: value, of: subject, as: .owner)
                return "set"
            case .readCharacteristics(let subject, let caller):
                return "\(try await store.characteristics(of: subject, as: caller).values.sorted { $0.key < $1.key })"
            case .delete(let ids, let caller):
                return "\(try await store.delete(ids, as: caller))"
            case .changes(let type, let caller):
                let changes = try await store.changes(of: type, since: nil, limit: 1_000_000, as: caller)
                // The samples of one batch may come in another order; the set and the deletions must agree.
                let added = changes.added.sorted { $0.id.uuidString < $1.id.uuidString }
                let series = changes.heartbeatSeries.sorted { $0.id.uuidString < $1.id.uuidString }
                let correlations = changes.correlations.sorted { $0.id.uuidString < $1.id.uuidString }
                let workouts = changes.workouts.sorted { $0.id.uuidString < $1.id.uuidString }
                return "\(added) \(series) \(correlations) \(workouts) \(changes.deleted) \(changes.hasMore)"
            }
        } catch {
            return "error \(type(of: error))"
        }
    }

    /// A statistic with its sums and averages rounded to what the engines promise alike (item 12's tolerance).
    static func rounded(_ result: StatisticsResult) -> String {
        func round(_ value: Double?) -> String { value.map { String(format: "%.6g", $0) } ?? "-" }
        return [
            "\(result.bucket.start.milliseconds)", result.provenance?.description ?? "-",
            result.sources.map(\.description).joined(separator: ","), round(result.sum),
            "\(result.discrete?.count ?? -1)", round(result.discrete?.average), round(result.discrete?.minimum),
            round(result.discrete?.maximum), round(result.discrete?.mostRecent),
            round(result.discrete?.timeWeightedAverage), "\(result.categories)",
        ].joined(separator: " ")
    }

    @Test func randomMixesGiveTheSameAnswersOnBothEngines() async throws {
        let seed =
            ProcessInfo.processInfo.environment["WEARHOUSE_PROPERTY_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("CrossEnginePropertyTests: seed \(seed) (WEARHOUSE_PROPERTY_SEED=\(seed) runs it again)")
        let steps = try Self.steps(seed: seed, count: 80)
        let (sqlite, sqliteStorage) = try makeStore(.sqlite)
        defer { sqliteStorage.remove() }
        let (postgres, postgresStorage) = try makeStore(.postgresql)
        defer { postgresStorage.remove() }
        for store in [sqlite, postgres] {
            for app in Self.apps {
                // One app reads what it may (steps, sleep, the date of birth); both write some of the types.
                let reads = app == Self.apps[0]
                try await store.setAuthorization(
                    app: app,
                    Self.types.map {
                        TypeAuthorization(type: $0.identifier, read: reads && $0 != .heartRate, share: $0 != .bodyMass)
                    } + [TypeAuthorization(type: "dateOfBirth", read: reads, share: false)]
                        + ["bloodPressureSystolic", "bloodPressureDiastolic", "workout"].map {
                            TypeAuthorization(type: $0, read: reads, share: app == Self.apps[1] || $0 == "workout")
                        })
            }
        }
        var answered = 0
        for (index, step) in steps.enumerated() {
            let expected = await Self.run(step, on: sqlite)
            let actual = await Self.run(step, on: postgres)
            #expect(actual == expected, "seed \(seed), step \(index): \(step)")
            guard actual == expected else { break }
            if !expected.hasPrefix("error") { answered += 1 }
        }
        #expect(answered > steps.count / 2, "seed \(seed): most steps should succeed")
    }
}
