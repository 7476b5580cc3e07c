import Foundation
import Health
import StoreEngine
import Support
import Testing

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
}
