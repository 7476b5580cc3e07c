import Foundation
import Health
import StoreEngine
import Support
import Testing

@testable import PostgresStore

/// ``HealthStoreEngine/sampleColumns(_:as:)`` reads what ``HealthStore/samples(_:as:)`` reads: the same samples (ids,
/// times, values, sources, devices, subjects, offsets, metadata), in the same order, with the same cursors, for every
/// filter, order, limit and caller, on rows and chunks.
extension StoreConformanceTests {
    /// Seeded: a store of owner-written streams (SQLite's chunks), samples with client ids and an app's samples
    /// (rows), with shared starts, ends and exact ties across them; random queries paged through both calls.
    @Test(arguments: Engine.allCases) func columnsReadWhatSamplesRead(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        var random = SplitMix64(seed: 44)
        let sources = [Self.gateway, Source(identifier: "org.example.watch"), Source(identifier: "org.example.scale")]
        let devices: [Device?] = [Self.strap, Self.watch, nil]
        let subjects: [String?] = ["alice", "bob", nil]
        let metadata: [[String: MetadataValue]] = [[:], ["note": .string("a, \"b\"")], ["laps": .number(3)]]
        let base: Int64 = 1_743_292_800_000
        func pick<T>(_ items: [T]) -> T { random.pick(items) }
        func sample(source: Source? = nil, external: Bool = false) -> QuantitySample {
            let start = base + Int64(random.next() % 400) * 30_000
            let span = random.next() % 2 == 0 ? 0 : Int64(1 + random.next() % 4) * 30_000
            var tags = pick(metadata)
            if external { tags[MetadataKey.externalUUID] = .string("r-\(random.next() % 1_000_000)") }
            return QuantitySample(
                type: .heartRate, start: Instant(milliseconds: start), end: Instant(milliseconds: start + span),
                startOffsetSeconds: pick([0, 3_600]), value: Double(40 + random.next() % 160) + 0.5,
                source: source ?? pick(sources), device: pick(devices), subject: pick(subjects), metadata: tags)
        }
        let app = Source(identifier: "com.example.pulse")
        try await store.setAuthorization(
            app: app.identifier, [TypeAuthorization(type: "heartRate", read: false, share: true)])
        try await store.setAuthorization(
            app: "com.example.reader", [TypeAuthorization(type: "heartRate", read: true, share: false)])
        for _ in 0..<3 { _ = try await store.save((0..<300).map { _ in sample() }, as: .owner) }
        _ = try await store.save((0..<60).map { _ in sample(external: true) }, as: .owner)
        _ = try await store.save((0..<80).map { _ in sample(source: app) }, as: .app(app.identifier))
        let all = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(all.count > 700)

        let callers: [Caller] = [.owner, .app(app.identifier), .app("com.example.reader"), .app("com.example.none")]
        for round in 0..<40 {
            var query = SampleQuery(type: .heartRate)
            if random.next() % 2 == 0 { query.from = Instant(milliseconds: base + Int64(random.next() % 400) * 30_000) }
            if random.next() % 2 == 0 { query.to = Instant(milliseconds: base + Int64(random.next() % 400) * 30_000) }
            query.strictStart = random.next() % 4 == 0
            query.strictEnd = random.next() % 4 == 0
            if random.next() % 4 == 0 { query.sources = [pick(sources).identifier, app.identifier] }
            if random.next() % 4 == 0 { query.devices = [Self.watch.key] }
            if random.next() % 4 == 0 { query.subjects = ["alice"] }
            query.sort = pick(Self.sortOrders)
            query.limit = pick([nil, 1, 7, 50, 333])
            if round % 10 == 9 { query.metadata = [.equals("laps", .number(3))] }
            let caller = pick(callers)
            var rowQuery = query
            var columnQuery = query
            // Every page of the larger limits; the first 20 of the smaller ones (a walk of single samples across
            // chunks and rows is what they add).
            var pages = 0
            while pages < 20 || (query.limit ?? 1_000) >= 50 {
                let page = try await store.samples(rowQuery, as: caller)
                let columns = try await store.sampleColumns(columnQuery, as: caller)
                #expect(columns.samples == page.samples, "round \(round): \(query) as \(caller)")
                #expect(columns.next == page.next, "round \(round)")
                guard let next = page.next, let following = columns.next else { break }
                rowQuery.cursor = next
                columnQuery.cursor = following
                pages += 1
            }
        }
    }

    /// Rows at the edges of what a store holds (times at the ends of the years 1-9999 and before 1970, a sample
    /// spanning them all, values from the smallest subnormal to the largest double, odd UTC offsets, names and
    /// metadata with quotes, commas, line breaks, control characters and every kind of value, sources with and
    /// without a version, devices with every field and with one, a category type) and many samples tied on start and
    /// end (one per source and device, and rows with client ids), read both ways page by page on both engines. On
    /// PostgreSQL its statements read parts of 1 to 5 rows too, so that a part's border falls between tied samples,
    /// and each part is one entry of the access log.
    @Test(arguments: Engine.allCases) func columnsReadOddRowsAsSamplesDo(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let limits = Instant.supportedMilliseconds
        let base: Int64 = 1_743_292_800_000
        let sources = [
            Source(identifier: "org.example.a"), Source(identifier: "org.example.b", version: "2.0"),
            Source(identifier: "ö \"quoted\", comma\n $1 'q' \\"),
        ]
        let devices: [Device?] = [
            nil,
            Device(
                name: "Ñame, \"x\"\n", manufacturer: "", model: "m", hardwareVersion: "h", firmwareVersion: "f,1",
                softwareVersion: "s", serialNumber: "0", localIdentifier: "AA:BB"),
            Device(localIdentifier: "only-local"),
        ]
        let subjects: [String?] = [nil, "alice", "Zoë \"z\""]
        let metadata: [[String: MetadataValue]] = [
            [:], ["": .string("")], ["emoji 🫀": .string("line\nbreak\t\"q\" \\ \u{0001}")],
            [
                "n": .number(-0.0), "i": .integer(Int64.min), "b": .bool(false),
                "d": .date(Instant(milliseconds: limits.lowerBound)), "q": .quantity(1e-300, unit: "mg/dL"),
            ],
        ]
        let offsets: [Int32] = [0, -43_200, 50_400, 1, -1, 45 * 60 + 5]
        let values: [Double] = [
            0, .leastNonzeroMagnitude, 1.0000000000000002, Double.greatestFiniteMagnitude, 123_456.789,
        ]
        var samples: [QuantitySample] = []
        // Ties: one sample per source and device at the same start and end (natural keys differ), each stream's
        // subject, offset and metadata its own.
        var stream = 0
        for source in sources {
            for device in devices {
                for (start, end) in [(base, base), (base, base + 60_000), (-1, -1)] {
                    samples.append(
                        QuantitySample(
                            type: .stepCount, start: Instant(milliseconds: start), end: Instant(milliseconds: end),
                            startOffsetSeconds: offsets[stream % offsets.count],
                            value: values[(stream + samples.count) % values.count], source: source, device: device,
                            subject: subjects[stream % subjects.count], metadata: metadata[stream % metadata.count]))
                }
                stream += 1
            }
        }
        // The ends of the supported years, and one sample across all of them.
        for (start, end) in [
            (limits.lowerBound, limits.lowerBound), (limits.upperBound, limits.upperBound),
            (limits.lowerBound, limits.upperBound), (limits.lowerBound + 1, 0),
        ] {
            samples.append(
                QuantitySample(
                    type: .stepCount, start: Instant(milliseconds: start), end: Instant(milliseconds: end),
                    startOffsetSeconds: Int32.min, value: 7, source: sources[2], device: devices[1],
                    subject: subjects[2], metadata: metadata[3]))
        }
        _ = try await store.save(samples, as: .owner)
        // Rows with client ids tied with the streams (same natural key, different client ids).
        let rows = (0..<12).map { index in
            QuantitySample(
                type: .stepCount, start: Instant(milliseconds: base), end: Instant(milliseconds: base),
                startOffsetSeconds: offsets[index % offsets.count], value: Double(index), source: sources[index % 3],
                device: devices[index % 3], subject: subjects[index % 3],
                metadata: metadata[index % metadata.count].merging([MetadataKey.externalUUID: .string("c-\(index)")]) {
                    first, _ in first
                })
        }
        _ = try await store.save(rows, as: .owner)
        let sleep = (0..<6).map { index in
            QuantitySample(
                type: .sleepAnalysis, start: Instant(milliseconds: base + Int64(index / 2) * 60_000),
                end: Instant(milliseconds: base + Int64(index / 2 + 1) * 60_000), startOffsetSeconds: 19_800,
                value: Double(index % 6), source: sources[index % 2], metadata: metadata[index % metadata.count])
        }
        _ = try await store.save(sleep, as: .owner)
        let app = "com.example.pulse"
        try await store.setAuthorization(app: app, [TypeAuthorization(type: "stepCount", read: false, share: true)])
        let own = (0..<5).map { index in
            QuantitySample(
                type: .stepCount, start: Instant(milliseconds: base), end: Instant(milliseconds: base),
                value: Double(index), source: Source(identifier: app),
                metadata: [MetadataKey.externalUUID: .string("a-\(index)")])
        }
        _ = try await store.save(own, as: .app(app))
        // A workout whose associated samples are some of the tied ones.
        let workout = Workout(
            activityType: .running, start: Instant(milliseconds: base), end: Instant(milliseconds: base + 60_000),
            source: sources[0])
        _ = try await store.save([workout], as: .owner)
        let stored = try await store.samples(SampleQuery(type: .stepCount), as: .owner).samples
        #expect(stored.count == samples.count + rows.count + own.count)
        let members = stored.filter { $0.start.milliseconds == base }.enumerated().filter { $0.offset % 3 == 0 }
        #expect(try await store.add(members.map(\.element.id), to: workout.id, as: .owner) == members.count)

        var queries: [SampleQuery] = []
        for type in [HealthType.stepCount, .sleepAnalysis] {
            queries.append(SampleQuery(type: type))
        }
        for sort in Self.sortOrders {
            queries.append(SampleQuery(type: .stepCount, sort: sort))
        }
        let instants = [limits.lowerBound, -1, base, base + 60_000, limits.upperBound].map { Instant(milliseconds: $0) }
        for from in instants {
            for to in instants where to >= from {
                for strict in [false, true] {
                    var query = SampleQuery(type: .stepCount, from: from, to: to)
                    query.strictStart = strict
                    query.strictEnd = !strict
                    queries.append(query)
                }
            }
        }
        queries.append(SampleQuery(type: .stepCount, sources: [sources[2].identifier, app]))
        queries.append(SampleQuery(type: .stepCount, devices: [devices[1]!.key]))
        queries.append(SampleQuery(type: .stepCount, subjects: [subjects[2]!]))
        var tagged = SampleQuery(type: .stepCount)
        tagged.metadata = [.exists("emoji 🫀")]
        queries.append(tagged)
        var during = SampleQuery(type: .stepCount)
        during.workout = workout.id
        queries.append(during)
        var missing = SampleQuery(type: .stepCount)
        missing.workout = UUID()
        queries.append(missing)
        queries.append(SampleQuery(type: .bodyMass))

        // Every query by the owner, whole and in pages of 3; a few by every caller in pages of every size.
        var cases: [(SampleQuery, Caller, Int?)] = []
        for query in queries {
            cases += [(query, .owner, nil), (query, .owner, 3)]
        }
        for query in [queries[0], queries[3], queries[40]] {
            for caller in [Caller.owner, .app(app), .app("com.example.none")] {
                for limit in [nil, 1, 2, 7, 1_000] as [Int?] { cases.append((query, caller, limit)) }
            }
        }
        let postgres = store as? PostgresHealthStore
        // Each part is one read in the access log, with what it matched.
        await postgres?.setColumnsFetch(5)
        let before = try await store.accessLog(limit: 100_000).count
        let whole = try await store.sampleColumns(SampleQuery(type: .stepCount), as: .owner)
        let log = try await store.accessLog(limit: 100_000)
        let entries = log.prefix(log.count - before)
        #expect(entries.allSatisfy { $0.operation == .query && $0.type == "stepCount" && $0.caller == .owner })
        #expect(entries.map(\.sampleCount).reduce(0, +) == whole.count)
        #expect(entries.count == (engine == .postgresql ? whole.count / 5 + 1 : 1))

        let fetches: [Int?] = engine == .postgresql ? [PostgresHealthStore.defaultColumnsFetch, 1, 2, 5] : [nil]
        for fetch in fetches {
            if let fetch { await postgres?.setColumnsFetch(fetch) }
            for (query, caller, limit) in cases {
                var rowQuery = query
                var columnQuery = query
                rowQuery.limit = limit
                columnQuery.limit = limit
                var pages = 0
                while pages < 200 {
                    let page = try await store.samples(rowQuery, as: caller)
                    let columns = try await store.sampleColumns(columnQuery, as: caller)
                    #expect(
                        columns.samples == page.samples,
                        "fetch \(fetch ?? 0): \(query) limit \(limit ?? 0) as \(caller), page \(pages)")
                    #expect(columns.next == page.next, "fetch \(fetch ?? 0): \(query) as \(caller)")
                    guard let next = page.next, let following = columns.next else { break }
                    rowQuery.cursor = next
                    columnQuery.cursor = following
                    pages += 1
                }
                #expect(pages < 200)
            }
        }
    }
}
