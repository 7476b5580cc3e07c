import Foundation
import Health
import Testing

/// Sort descriptors (HealthKit's `[NSSortDescriptor(startDate), NSSortDescriptor(endDate)]`): every order, paged with
/// a cursor, on rows, chunks and heartbeat series.
extension StoreConformanceTests {
    /// Every order of one or two keys: start or end first, each direction.
    static let sortOrders: [[SampleSortDescriptor]] = {
        var orders: [[SampleSortDescriptor]] = []
        for first in SampleSortDescriptor.Key.allCases {
            let second: SampleSortDescriptor.Key = first == .start ? .end : .start
            for up in [true, false] {
                orders.append([SampleSortDescriptor(first, ascending: up)])
                for secondUp in [true, false] {
                    orders.append([
                        SampleSortDescriptor(first, ascending: up), SampleSortDescriptor(second, ascending: secondUp),
                    ])
                }
            }
        }
        return orders
    }()

    /// The order docs/app-api.md promises (after the method table): the keys given, then the other key and
    /// then the id bytes, both in the direction of the last key given.
    static func expectedOrder<T>(
        _ items: [T], _ sort: [SampleSortDescriptor], key: (T) -> (start: Int64, end: Int64, id: [UInt8])
    ) -> [T] {
        var keys = sort
        let last = sort.last?.ascending ?? true
        if !keys.contains(where: { $0.key == .end }) { keys.append(SampleSortDescriptor(.end, ascending: last)) }
        if !keys.contains(where: { $0.key == .start }) { keys.append(SampleSortDescriptor(.start, ascending: last)) }
        return items.sorted { lhs, rhs in
            let left = key(lhs)
            let right = key(rhs)
            for descriptor in keys {
                let (a, b) = descriptor.key == .start ? (left.start, right.start) : (left.end, right.end)
                if a != b { return descriptor.ascending == (a < b) }
            }
            return last == left.id.lexicographicallyPrecedes(right.id)
        }
    }

    @Test(arguments: Engine.allCases) func everySortOrderPagesThroughRowsAndChunks(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        // Heart rates over intervals of 1 to 4 minutes, with shared starts, shared ends and exact ties: the owner's
        // kept as chunks (SQLite's dense series), an app's as rows; ties of start and end between the two sources.
        func reading(_ start: Int64, _ minutes: Int64, _ value: Double, _ source: Source) -> QuantitySample {
            QuantitySample(
                type: .heartRate, start: Instant(seconds: start * 60), end: Instant(seconds: (start + minutes) * 60),
                value: value, source: source)
        }
        let app = Source(identifier: "com.example.pulse")
        try await store.setAuthorization(
            app: app.identifier, [TypeAuthorization(type: "heartRate", read: true, share: true)])
        var owned: [QuantitySample] = []
        for index in 0..<30 {
            let start = Int64(index / 3) * 2
            owned.append(reading(start, Int64(index % 3) + 1, Double(60 + index), Self.gateway))
        }
        var apps: [QuantitySample] = []
        for index in 0..<20 { apps.append(reading(Int64(index) + 1, Int64(index % 4) + 1, Double(100 + index), app)) }
        _ = try await store.save(owned, as: .owner)
        _ = try await store.save(apps, as: .app(app.identifier))
        let all = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(all.count == 50)

        for sort in Self.sortOrders {
            let expected = Self.expectedOrder(all, sort) {
                ($0.start.milliseconds, $0.end.milliseconds, $0.id.bytes)
            }
            let whole = try await store.samples(SampleQuery(type: .heartRate, sort: sort), as: .owner)
            #expect(whole.samples.map(\.id) == expected.map(\.id), "\(sort)")
            for limit in [1, 7] {
                var query = SampleQuery(type: .heartRate, sort: sort, limit: limit)
                var seen: [UUID] = []
                while seen.count <= all.count {
                    let page = try await store.samples(query, as: .owner)
                    seen += page.samples.map(\.id)
                    guard let next = page.next else { break }
                    query.cursor = next
                }
                #expect(seen == expected.map(\.id), "\(sort) by \(limit)")
            }
            // The same order within a window, and for an app that sees only its own.
            let window = try await store.samples(
                SampleQuery(
                    type: .heartRate, from: Instant(seconds: 300), to: Instant(seconds: 900), sort: sort, limit: 5),
                as: .owner)
            let inWindow = expected.filter { $0.end.milliseconds >= 300_000 && $0.start.milliseconds < 900_000 }
                .filter { !($0.end.milliseconds == 300_000 && $0.start < $0.end) }
            #expect(window.samples.map(\.id) == inWindow.prefix(5).map(\.id), "\(sort) in a window")
        }
        // HealthKit's usual query: newest first by start, then by end, the first 5.
        let newest = try await store.samples(
            SampleQuery(
                type: .heartRate,
                sort: [SampleSortDescriptor(.start, ascending: false), .init(.end, ascending: false)],
                limit: 5), as: .owner)
        #expect(newest.samples.map(\.start.milliseconds) == [1_200_000, 1_140_000, 1_080_000, 1_080_000, 1_080_000])
        #expect(newest.samples[2...].map(\.end) == newest.samples[2...].map(\.end).sorted(by: >))
    }

    @Test(arguments: Engine.allCases) func everySortOrderPagesThroughHeartbeatSeries(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        // Series of one minute and of ninety seconds, from two devices: equal starts, equal ends, ties on both.
        var written: [HeartbeatSeriesSample] = []
        for minute in 0..<12 {
            let one = series(minute: Int64(minute / 2) * 2, device: minute.isMultiple(of: 3) ? Self.watch : Self.strap)
            written.append(
                HeartbeatSeriesSample(
                    start: one.start, end: Instant(milliseconds: one.end.milliseconds + (minute % 2 == 1 ? 30_000 : 0)),
                    beats: one.beats, source: one.source, device: one.device, subject: one.subject,
                    metadata: one.metadata))
        }
        written.append(series(minute: 20, device: Self.watch))
        written.append(series(minute: 20, device: Self.strap))
        _ = try await store.save(written, as: .owner)
        let all = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        #expect(all.count == written.count)
        for sort in Self.sortOrders {
            let expected = Self.expectedOrder(all, sort) { ($0.start.milliseconds, $0.end.milliseconds, $0.id.bytes) }
            var query = SampleQuery(type: .heartbeatSeries, sort: sort, limit: 3)
            var seen: [UUID] = []
            while seen.count <= all.count {
                let page = try await store.heartbeatSeries(query, as: .owner)
                seen += page.series.map(\.id)
                guard let next = page.next else { break }
                query.cursor = next
            }
            #expect(seen == expected.map(\.id), "\(sort)")
        }
    }

    @Test func sortOrdersParseAndRefuseWhatTheyCannotMean() throws {
        #expect(
            try SampleSortDescriptor.parse("start,-end") == [
                SampleSortDescriptor(.start), SampleSortDescriptor(.end, ascending: false),
            ])
        #expect(try SampleSortDescriptor.parse(["-startDate", "endDate"]).map(\.description) == ["-start", "end"])
        #expect(SampleOrder([SampleSortDescriptor(.end, ascending: false)]).description == "-end,-start")
        #expect(SampleOrder([]).description == "start,end")
        for bad in ["", "start,start", "middle", "start,end,start", "+start"] {
            #expect(throws: SortError.self, "\(bad)") { try SampleSortDescriptor.parse(bad) }
        }
    }
}
