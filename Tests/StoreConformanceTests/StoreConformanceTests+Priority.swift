import Foundation
import Health
import StoreEngine
import TestSupport
import Testing

/// The person's source priority (`wearhouse priority`), on both engines: per type and a default, the unranked
/// policy kept with the list, a source's every-device entry, and lists a store refuses.
extension StoreConformanceTests {
    /// The footpod (strap key) counted 1,000 steps in 0-600 s, the watch 600 in 300-900 s, and a phone app without a
    /// device 800 in 800-1,200 s, written in that order (so, unranked, the later write wins each overlap).
    private func overlappingSteps(_ store: any HealthStoreEngine) async throws {
        func steps(_ source: Source, _ device: Device?, _ start: Int64, _ end: Int64, _ value: Double) -> QuantitySample
        {
            QuantitySample(
                type: .stepCount, start: Instant(seconds: start), end: Instant(seconds: end), value: value,
                source: source, device: device, subject: "alice")
        }
        _ = try await store.save([steps(Self.gateway, Self.strap, 0, 600, 1_000)], as: .owner)
        _ = try await store.save([steps(Self.gateway, Self.watch, 300, 900, 600)], as: .owner)
        _ = try await store.save([steps(Source(identifier: "com.example.phone"), nil, 800, 1_200, 800)], as: .owner)
    }

    private func total(_ store: any HealthStoreEngine, _ query: (inout StatisticsQuery) -> Void = { _ in }) async throws
        -> Double?
    {
        let buckets = try StatisticsBuckets.buckets(
            borders: [Instant(seconds: 0), Instant(seconds: 3_600)], timeZone: TimeZone(identifier: "UTC") ?? .gmt)
        var statistics = StatisticsQuery(type: .stepCount, buckets: buckets)
        query(&statistics)
        return try await store.statistics(statistics, as: .owner).first?.sum
    }

    @Test(arguments: Engine.allCases) func thePersonsPriorityDecidesTheMergedTotal(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        try await overlappingSteps(store)
        let gateway = Self.gateway.identifier
        // No priority: the later write wins. Footpod 0-300 (500), watch 300-800 (500), phone 800-1200 (800).
        #expect(try await total(store) == 1_800)
        #expect(try await store.priorities().isEmpty)

        // Every device of the gateway first: footpod 0-300 (500), watch 300-900 (600: ranked as high as the footpod
        // and written later; above the phone), phone 900-1200 (600).
        let anyGatewayDevice = Provenance(source: gateway, device: Provenance.anyDevice)
        try await store.setPriority(of: .stepCount, SourcePriority(order: [anyGatewayDevice]))
        #expect(try await total(store) == 1_700)
        // The same list excluding the unranked drops the phone.
        try await store.setPriority(of: .stepCount, SourcePriority(order: [anyGatewayDevice], unranked: .exclude))
        #expect(try await total(store) == 1_100)
        #expect(
            try await store.priorities() == [
                "stepCount": SourcePriority(order: [anyGatewayDevice], unranked: .exclude)
            ])

        // An entry without a device ranks only samples without one: the gateway's devices are unranked, excluded.
        try await store.setPriority(
            of: .stepCount,
            SourcePriority(
                order: [
                    Provenance(source: "com.example.phone", device: nil), Provenance(source: gateway, device: nil),
                ],
                unranked: .exclude))
        #expect(try await total(store) == 800)

        // A type without its own list uses the default; the type's own, once set, overrides it.
        try await store.setPriority(of: .stepCount, nil)
        try await store.setPriority(
            of: nil,
            SourcePriority(order: [Provenance(source: "com.example.phone", device: nil)], unranked: .exclude))
        #expect(try await total(store) == 800)
        #expect(try await store.effectivePriority(of: .stepCount).unranked == .exclude)
        try await store.setPriority(
            of: .stepCount, SourcePriority(order: [Provenance(source: gateway, device: Self.watch.key)]))
        // Watch 300-900 (600), footpod 0-300 (500), phone 900-1200 (600).
        #expect(try await total(store) == 1_700)
        // A query's own list overrides both, with gap filling unless it says otherwise.
        #expect(
            try await total(store) {
                $0.priority = [Provenance(source: "com.example.phone", device: nil)]
            } == 1_800)
        #expect(
            try await total(store) {
                $0.priority = [Provenance(source: "com.example.phone", device: nil)]
                $0.unranked = .exclude
            } == 800)
        try await store.setPriority(of: nil, nil)
        try await store.setPriority(of: .stepCount, nil)
        #expect(try await store.priorities().isEmpty)
        #expect(try await total(store) == 1_800)
    }

    @Test(arguments: Engine.allCases) func aPriorityListThatCannotBeKeptIsRefusedWhole(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let kept = SourcePriority(order: [Provenance(source: "a", device: nil)])
        try await store.setPriority(of: .stepCount, kept)
        let refused: [SourcePriority] = [
            SourcePriority(order: [], unranked: .exclude),
            SourcePriority(order: [Provenance(source: "", device: nil)]),
            SourcePriority(order: [Provenance(source: "a", device: "x"), Provenance(source: "a", device: "x")]),
            SourcePriority(order: [Provenance(source: "a\u{0}b", device: nil)]),
            SourcePriority(order: [Provenance(source: "a", device: String(repeating: "d", count: 257))]),
            SourcePriority(
                order: (0...SourcePriority.maximumEntries).map { Provenance(source: "s\($0)", device: nil) }),
        ]
        for priority in refused {
            await #expect(throws: InvalidSampleError.self, "\(priority)") {
                try await store.setPriority(of: .stepCount, priority)
            }
        }
        #expect(try await store.priorities() == ["stepCount": kept])
    }
}
