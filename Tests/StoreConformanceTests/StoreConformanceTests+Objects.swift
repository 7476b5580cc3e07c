import Foundation
import Health
import Testing

/// Correlations and workouts (`docs/store-semantics.md`, items 27 and 28), on both engines.
extension StoreConformanceTests {
    static let cuff = Source(identifier: "com.example.cuff")
    static let runner = Source(identifier: "com.example.runner")

    static func pressure(_ second: Int64, _ systolic: Double, _ diastolic: Double, source: Source = cuff)
        -> Correlation
    {
        .bloodPressure(
            systolic: systolic, diastolic: diastolic, at: Instant(seconds: second), source: source,
            metadata: ["arm": .string("left")])
    }

    static func meal(_ second: Int64, source: Source = cuff) -> Correlation {
        let start = Instant(seconds: second)
        let end = Instant(seconds: second + 1_800)
        func part(_ identifier: String, _ value: Double, _ offset: Int64) -> QuantitySample {
            QuantitySample(
                type: HealthTypeCatalog.type(identifier)!, start: Instant(seconds: second + offset),
                end: Instant(seconds: second + offset), value: value, source: source)
        }
        return Correlation(
            type: .food, start: start, end: end,
            objects: [part("dietaryEnergyConsumed", 650, 0), part("dietaryProtein", 32, 60)], source: source,
            metadata: ["foodType": .string("lentil soup")])
    }

    @Test(arguments: Engine.allCases) func bloodPressureIsSavedOnceWithItsMembers(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let reading = Self.pressure(1_000, 121, 79)
        #expect(try await store.save([reading, Self.meal(5_000)], as: .owner) == [.inserted, .inserted])
        // The same correlation again is stored once; different members under its key are a conflict.
        #expect(try await store.save([reading], as: .owner) == [.duplicate])
        #expect(try await store.save([Self.pressure(1_000, 130, 85)], as: .owner) == [.conflict])
        let page = try await store.correlations(SampleQuery(type: .bloodPressure), as: .owner)
        #expect(page.correlations.count == 1)
        let stored = try #require(page.correlations.first)
        #expect(stored.id == reading.id)
        #expect(stored.metadata["arm"] == .string("left"))
        #expect(stored.objects(for: .bloodPressureSystolic).map(\.value) == [121])
        #expect(stored.objects(for: .bloodPressureDiastolic).map(\.value) == [79])
        #expect(Set(stored.objects.map(\.id)) == Set(reading.objects.map(\.id)))
        // The members are ordinary samples: queries, statistics and changes of their types see them.
        #expect(try await store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.count == 1)
        let buckets = try StatisticsBuckets.buckets(borders: [Instant(seconds: 0), Instant(seconds: 2_000)])
        let statistics = try await store.statistics(
            StatisticsQuery(type: .bloodPressureDiastolic, buckets: buckets), as: .owner)
        #expect(statistics.first?.discrete?.average == 79)
        #expect(
            try await store.changes(of: .bloodPressureSystolic, since: nil, limit: 10, as: .owner).added.count == 1)
        let food = try await store.correlations(SampleQuery(type: .food), as: .owner).correlations
        #expect(food.first?.objects.count == 2)
        #expect(food.first?.metadata["foodType"] == .string("lentil soup"))
        // Correlations come in the anchored changes of their type.
        let changes = try await store.changes(of: .bloodPressure, since: nil, limit: 10, as: .owner)
        #expect(changes.correlations.map(\.id) == [reading.id])
        #expect(changes.correlations.first?.objects.count == 2)
    }

    /// A member that is a stored sample again, under an id of its own (an app that saved the readings first, then
    /// the correlation; a retry that made new ids): the correlation holds the stored sample, by its stored id.
    @Test(arguments: Engine.allCases) func aMemberAlreadyStoredUnderAnotherIdIsTheStoredSample(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var first = Self.pressure(1_000, 121, 79)
        first.objects[0].id = UUID()  // the systolic with an id of its own, stored alone first
        #expect(try await store.save([first.objects[0]], as: .owner) == [.inserted])
        var reading = Self.pressure(1_000, 121, 79)
        for index in reading.objects.indices { reading.objects[index].id = UUID() }
        #expect(try await store.save([reading], as: .owner) == [.inserted])
        let stored = try await store.correlations(SampleQuery(type: .bloodPressure), as: .owner).correlations
        #expect(stored.count == 1)
        let members = stored.first?.objects ?? []
        #expect(members.map(\.value).sorted() == [79, 121])
        let storedIDs = Set(members.map(\.id))
        #expect(storedIDs.contains(first.objects[0].id))
        #expect(storedIDs.contains(reading.objects[1].id))
        #expect(try await store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.count == 1)
        // The same correlation again, its members with new ids again: the same measurements.
        var retried = reading
        for index in retried.objects.indices { retried.objects[index].id = UUID() }
        #expect(try await store.save([retried], as: .owner) == [.duplicate])
        retried.objects[0].value = 125
        #expect(try await store.save([retried], as: .owner) == [.conflict])
        // The same readings once more in another correlation (an id of its own): they belong to the first one.
        var again = Self.pressure(1_000, 121, 79)
        again.id = UUID()
        for index in again.objects.indices { again.objects[index].id = UUID() }
        await #expect(throws: InvalidSampleError.self) { try await store.save([again], as: .owner) }
        #expect(try await store.correlations(SampleQuery(type: .bloodPressure), as: .owner).correlations.count == 1)
    }

    @Test(arguments: Engine.allCases) func invalidCorrelationsStoreNothing(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        // The second member is out of range: neither the correlation nor its first member is stored.
        var bad = Self.pressure(1_000, 120, 80)
        bad.objects[1].value = 900
        await #expect(throws: InvalidSampleError.self) {
            try await store.save([Self.pressure(500, 110, 70), bad], as: .owner)
        }
        #expect(try await store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.isEmpty)
        #expect(try await store.correlations(SampleQuery(type: .bloodPressure), as: .owner).correlations.isEmpty)
        // One member only, a member at another time, a heart rate in a blood pressure: each is refused by name.
        var single = Self.pressure(2_000, 120, 80)
        single.objects.removeLast()
        var shifted = Self.pressure(3_000, 120, 80)
        shifted.objects[0] = QuantitySample(
            type: .bloodPressureSystolic, start: Instant(seconds: 2_999), end: Instant(seconds: 2_999), value: 120,
            source: Self.cuff)
        var foreign = Self.pressure(4_000, 120, 80)
        foreign.objects[1] = QuantitySample(
            type: .heartRate, start: Instant(seconds: 4_000), end: Instant(seconds: 4_000), value: 60,
            source: Self.cuff)
        for (correlation, words) in [
            (single, "exactly one bloodPressureSystolic"), (shifted, "the correlation's start and end"),
            (foreign, "not heartRate"),
        ] {
            do {
                _ = try await store.save([correlation], as: .owner)
                Issue.record("saved an invalid correlation")
            } catch let error as InvalidSampleError {
                #expect(error.reason.contains(words), "\(error.reason)")
            }
        }
        // A member that conflicts with a stored sample rejects the correlation, and the stored sample stands.
        let stored = QuantitySample(
            type: .bloodPressureSystolic, start: Instant(seconds: 6_000), end: Instant(seconds: 6_000), value: 140,
            source: Self.cuff)
        _ = try await store.save([stored], as: .owner)
        await #expect(throws: InvalidSampleError.self) {
            try await store.save([Self.pressure(6_000, 120, 80)], as: .owner)
        }
        #expect(try await store.samples(SampleQuery(type: .bloodPressureDiastolic), as: .owner).samples.isEmpty)
        #expect(
            try await store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.map(\.value) == [140]
        )
    }

    @Test(arguments: Engine.allCases) func deletingACorrelationOrAMemberDeletesItWhole(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let first = Self.pressure(1_000, 120, 80)
        let second = Self.pressure(2_000, 125, 82)
        _ = try await store.save([first, second], as: .owner)
        // The correlation and its two members.
        #expect(try await store.delete([first.id], as: .owner) == 3)
        // A member: its correlation and the other member go too.
        #expect(try await store.delete([second.objects[1].id], as: .owner) == 3)
        #expect(try await store.correlations(SampleQuery(type: .bloodPressure), as: .owner).correlations.isEmpty)
        #expect(try await store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.isEmpty)
        let changes = try await store.changes(of: .bloodPressure, since: nil, limit: 10, as: .owner)
        #expect(changes.correlations.isEmpty)
        #expect(Set(changes.deleted) == [first.id, second.id])
        let members = try await store.changes(of: .bloodPressureDiastolic, since: nil, limit: 10, as: .owner)
        #expect(Set(members.deleted) == [first.objects[1].id, second.objects[1].id])
    }

    @Test(arguments: Engine.allCases) func correlationGrantsApplyToTheMemberTypes(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let app = Caller.app("com.example.cuff")
        // Share on one member type is not enough; nothing is written.
        try await store.setAuthorization(
            app: "com.example.cuff", [TypeAuthorization(type: "bloodPressureSystolic", read: false, share: true)])
        await #expect(throws: NotAuthorizedError.self) {
            try await store.save([Self.pressure(1_000, 120, 80)], as: app)
        }
        #expect(try await store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.isEmpty)
        try await store.setAuthorization(
            app: "com.example.cuff",
            [
                TypeAuthorization(type: "bloodPressureSystolic", read: false, share: true),
                TypeAuthorization(type: "bloodPressureDiastolic", read: false, share: true),
            ])
        #expect(try await store.save([Self.pressure(1_000, 120, 80)], as: app) == [.inserted])
        // The owner's reading is invisible to an app without read grants on both members, as if absent.
        let owners = Self.pressure(2_000, 130, 85, source: Self.gateway)
        _ = try await store.save([owners], as: .owner)
        let reader = Caller.app("com.example.reader")
        try await store.setAuthorization(
            app: "com.example.reader", [TypeAuthorization(type: "bloodPressureSystolic", read: true, share: false)])
        #expect(try await store.correlations(SampleQuery(type: .bloodPressure), as: reader).correlations.isEmpty)
        #expect(try await store.changes(of: .bloodPressure, since: nil, limit: 10, as: reader).correlations.isEmpty)
        try await store.setAuthorization(
            app: "com.example.reader",
            [
                TypeAuthorization(type: "bloodPressureSystolic", read: true, share: false),
                TypeAuthorization(type: "bloodPressureDiastolic", read: true, share: false),
            ])
        let seen = try await store.correlations(SampleQuery(type: .bloodPressure), as: reader).correlations
        #expect(seen.count == 2)
        #expect(seen.allSatisfy { $0.objects.count == 2 })
        // The cuff app sees its own reading only, and cannot delete the owner's.
        let own = try await store.correlations(SampleQuery(type: .bloodPressure), as: app).correlations
        #expect(own.map(\.source.identifier) == ["com.example.cuff"])
        #expect(try await store.delete([owners.id], as: app) == 0)
        #expect(try await store.delete([own[0].id], as: app) == 3)
    }

    static func run(_ start: Int64, source: Source = runner) -> Workout {
        Workout(
            activityType: .running, start: Instant(seconds: start), end: Instant(seconds: start + 3_600),
            duration: 3_300, totalEnergyBurned: 612.5, totalDistance: 10_012, totalFlightsClimbed: 4,
            events: [
                WorkoutEvent(.pause, start: Instant(seconds: start + 1_200)),
                WorkoutEvent(.resume, start: Instant(seconds: start + 1_500)),
                WorkoutEvent(
                    .lap, start: Instant(seconds: start), end: Instant(seconds: start + 600),
                    metadata: ["lap": .integer(1)]),
                WorkoutEvent(.segment, start: Instant(seconds: start + 600), end: Instant(seconds: start + 3_600)),
            ], source: source, subject: "alice", metadata: ["indoor": .bool(false)])
    }

    @Test(arguments: Engine.allCases) func workoutsAreStoredWithTotalsEventsAndSamples(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let workout = Self.run(10_000)
        let observed = try await store.typesWithNewSamples(since: nil).anchor
        #expect(try await store.save([workout], as: .owner) == [.inserted])
        // Observers learn of new workouts.
        #expect(try await store.typesWithNewSamples(since: observed).types == [HealthType.workout.identifier])
        #expect(try await store.save([workout], as: .owner) == [.duplicate])
        var changed = workout
        changed.totalDistance = 9_000
        #expect(try await store.save([changed], as: .owner) == [.conflict])
        let stored = try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts
        #expect(stored == [workout])
        #expect(stored.first?.activityType == .running)
        #expect(stored.first?.duration == 3_300)
        #expect(stored.first?.events.map(\.kind) == [.pause, .resume, .lap, .segment])
        #expect(stored.first?.events[2].metadata["lap"] == .integer(1))
        // Samples during it, associated; one outside it is not.
        let rates = (0..<5).map { index in
            QuantitySample(
                type: .heartRate, start: Instant(seconds: 10_000 + Int64(index) * 600),
                end: Instant(seconds: 10_000 + Int64(index) * 600), value: 120 + Double(index), source: Self.runner,
                subject: "alice")
        }
        _ = try await store.save(rates, as: .owner)
        #expect(try await store.add(rates.prefix(3).map(\.id), to: workout.id, as: .owner) == 3)
        #expect(try await store.add([rates[0].id], to: workout.id, as: .owner) == 0)
        await #expect(throws: InvalidSampleError.self) {
            try await store.add([UUID()], to: workout.id, as: .owner)
        }
        var query = SampleQuery(type: .heartRate)
        query.workout = workout.id
        #expect(try await store.samples(query, as: .owner).samples.map(\.value) == [120, 121, 122])
        query.type = .stepCount
        #expect(try await store.samples(query, as: .owner).samples.isEmpty)
        // Statistics per workout: over its interval.
        let statistics = try #require(try await store.statistics(of: .heartRate, during: workout, as: .owner))
        #expect(statistics.discrete?.count == 5)
        #expect(statistics.discrete?.maximum == 124)
        // Deleting an associated sample ends its association; deleting the workout keeps the samples.
        #expect(try await store.delete([rates[0].id], as: .owner) == 1)
        query.type = .heartRate
        #expect(try await store.samples(query, as: .owner).samples.count == 2)
        #expect(try await store.delete([workout.id], as: .owner) == 1)
        #expect(try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts.isEmpty)
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 4)
        #expect(try await store.samples(query, as: .owner).samples.isEmpty)
        // Anchored changes of `workout` include the deletion.
        let changes = try await store.changes(of: .workout, since: nil, limit: 10, as: .owner)
        #expect(changes.workouts.isEmpty)
        #expect(changes.deleted == [workout.id])
        #expect(try await store.latestAnchor(of: [.workout], as: .owner) == changes.anchor)
    }

    /// A run with a route of a location every 10 s, the last few without altitude, speed or course.
    static func routedRun(_ start: Int64, source: Source = runner) -> Workout {
        var workout = run(start, source: source)
        let locations = (0..<360).map { index in
            let known = index < 350
            return RouteLocation(
                time: Instant(milliseconds: (start + Int64(index) * 10) * 1_000 + 250),
                latitude: 51.5 + Double(index) * 1e-4,
                longitude: -0.1 - Double(index) * 1.5e-4, altitude: known ? 10 + Double(index % 7) * 0.1 : nil,
                horizontalAccuracy: 4.2, verticalAccuracy: known ? 3.1 : nil, speed: known ? 2.75 : nil,
                course: known ? 359.99 : nil)
        }
        workout.routes = [WorkoutRoute(locations: locations, metadata: ["syncVersion": .integer(2)])]
        return workout
    }

    @Test(arguments: Engine.allCases) func aWorkoutKeepsItsRoute(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let workout = Self.routedRun(10_000)
        #expect(try await store.save([workout], as: .owner) == [.inserted])
        let stored = try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts
        #expect(stored == [workout])
        #expect(stored.first?.routes.first?.locations.count == 360)
        #expect(stored.first?.routes.first?.locations.last?.altitude == nil)
        #expect(try await store.save([workout], as: .owner) == [.duplicate])
        // The same workout with another route is another record of it: a conflict, the first stands.
        var moved = workout
        moved.routes[0].locations[5].latitude += 1e-6
        #expect(try await store.save([moved], as: .owner) == [.conflict])
        #expect(try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts == [workout])

        // A route that no receiver made is refused, naming the route and the location.
        var invalid: [(Workout, String)] = []
        var north = Self.routedRun(20_000)
        north.routes[0].locations[1].latitude = 90.5
        invalid.append((north, "route 1 of the workout, location 2: latitude"))
        var backwards = Self.routedRun(20_000)
        backwards.routes[0].locations[3].time = backwards.routes[0].locations[1].time.adding(milliseconds: -1)
        invalid.append((backwards, "location 4: locations must be in time order"))
        var late = Self.routedRun(20_000)
        late.routes[0].locations.append(
            RouteLocation(time: late.end.adding(milliseconds: 3_600_001), latitude: 51, longitude: 0))
        invalid.append((late, "within an hour of the workout"))
        var unknown = Self.routedRun(20_000)
        unknown.routes[0].locations[0].speed = .nan
        invalid.append((unknown, "speed nan"))
        var empty = Self.routedRun(20_000)
        empty.routes.append(WorkoutRoute(locations: []))
        invalid.append((empty, "route 2 of the workout holds no location"))
        var many = Self.routedRun(20_000)
        many.routes = Array(repeating: many.routes[0], count: Workout.maximumRoutes + 1)
        invalid.append((many, "at most \(Workout.maximumRoutes) routes"))
        for (workout, words) in invalid {
            do {
                _ = try await store.save([workout], as: .owner)
                Issue.record("saved an invalid route (\(words))")
            } catch let error as InvalidSampleError {
                #expect(error.reason.contains(words), "\(error.reason)")
            }
        }
        #expect(try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts.count == 1)
    }

    /// Where someone went is granted apart from their workouts (HealthKit's `workoutRoute`): an app needs its share
    /// grant to save a route and its read grant to see others' routes; without it a workout reads as one without
    /// a route, in queries and in anchored changes alike. Its own routes it always sees.
    @Test(arguments: Engine.allCases) func routesNeedTheirOwnGrant(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let owners = Self.routedRun(10_000)
        #expect(try await store.save([owners], as: .owner) == [.inserted])
        let app = Caller.app("com.example.runner")
        try await store.setAuthorization(
            app: "com.example.runner", [TypeAuthorization(type: "workout", read: true, share: true)])
        let apps = Self.routedRun(50_000, source: Source(identifier: "com.example.runner"))
        await #expect(throws: NotAuthorizedError.self) { try await store.save([apps], as: app) }
        var bare = apps
        bare.routes = []
        #expect(try await store.save([bare], as: app) == [.inserted])
        // Read without the route grant: the owner's workout without its route, the app's own whole.
        func seen() async throws -> [Int] {
            try await store.workouts(SampleQuery(type: .workout), as: app).workouts.map { workout in
                workout.routes.reduce(0) { $0 + $1.locations.count }
            }
        }
        #expect(try await seen() == [0, 0])
        #expect(
            try await store.changes(of: .workout, since: nil, limit: 10, as: app).workouts.map(\.routes) == [[], []])
        try await store.setAuthorization(
            app: "com.example.runner", [TypeAuthorization(type: "workoutRoute", read: false, share: true)])
        let second = Self.routedRun(90_000, source: Source(identifier: "com.example.runner"))
        #expect(try await store.save([second], as: app) == [.inserted])
        #expect(try await seen() == [0, 0, 360])
        try await store.setAuthorization(
            app: "com.example.runner", [TypeAuthorization(type: "workoutRoute", read: true, share: true)])
        #expect(try await seen() == [360, 0, 360])
        let changes = try await store.changes(of: .workout, since: nil, limit: 10, as: app)
        #expect(changes.workouts.map { $0.routes.first?.locations.count ?? 0 } == [360, 0, 360])
        // The owner sees every route.
        #expect(try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts[0] == owners)
    }

    /// Anchored changes of workouts come a few at a time (a workout's row holds its routes, so that memory,
    /// and a reply over D-Bus, stay bounded however long they are; ObjectPageTests has the pages' own bound).
    @Test(arguments: Engine.allCases) func changesOfWorkoutsComeAFewAtATime(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        _ = try await store.save([Self.run(0), Self.run(10_000), Self.run(20_000)], as: .owner)
        // Forty more: their changes come 8 at a time.
        let short = (0..<40).map { Self.run(100_000 + Int64($0) * 4_000) }
        _ = try await store.save(short, as: .owner)
        var anchor = try await store.changes(of: .workout, since: nil, limit: 3, as: .owner).anchor
        var counts: [Int] = []
        while true {
            let some = try await store.changes(of: .workout, since: anchor, limit: 100, as: .owner)
            counts.append(some.workouts.count)
            anchor = some.anchor
            guard some.hasMore else { break }
        }
        #expect(counts == [8, 8, 8, 8, 8])
    }

    @Test(arguments: Engine.allCases) func workoutValidationAndGrants(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var long = Self.run(0)
        long.duration = 4_000
        var negative = Self.run(0)
        negative.totalEnergyBurned = -1
        var outside = Self.run(0)
        outside.events.append(WorkoutEvent(.marker, start: Instant(seconds: 9_999)))
        for (workout, words) in [
            (long, "duration"), (negative, "totalEnergyBurned"), (outside, "event 5 of the workout"),
        ] {
            do {
                _ = try await store.save([Self.run(100_000), workout], as: .owner)
                Issue.record("saved an invalid workout")
            } catch let error as InvalidSampleError {
                #expect(error.index == 1)
                #expect(error.reason.contains(words), "\(error.reason)")
            }
        }
        #expect(try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts.isEmpty)
        let app = Caller.app("com.example.runner")
        await #expect(throws: NotAuthorizedError.self) { try await store.save([Self.run(0)], as: app) }
        try await store.setAuthorization(
            app: "com.example.runner", [TypeAuthorization(type: "workout", read: false, share: true)])
        #expect(try await store.save([Self.run(0)], as: app) == [.inserted])
        _ = try await store.save([Self.run(50_000, source: Self.gateway)], as: .owner)
        // Without a read grant the app sees only its own workouts, and adds samples only to them.
        #expect(try await store.workouts(SampleQuery(type: .workout), as: app).workouts.count == 1)
        #expect(try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts.count == 2)
        await #expect(throws: InvalidSampleError.self) {
            try await store.add([], to: Self.run(50_000, source: Self.gateway).id, as: app)
        }
        // Paging: a limit and a cursor.
        let onePage = try await store.workouts(SampleQuery(type: .workout, limit: 1), as: .owner)
        #expect(onePage.workouts.map { $0.start } == [Instant(seconds: 0)])
        let cursor = try #require(onePage.next)
        let nextPage = try await store.workouts(SampleQuery(type: .workout, limit: 1, cursor: cursor), as: .owner)
        #expect(nextPage.workouts.map { $0.start } == [Instant(seconds: 50_000)])
    }
}
