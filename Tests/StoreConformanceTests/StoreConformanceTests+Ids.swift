import Foundation
import Health
import StoreEngine
import TestSupport
import Testing

/// A UUID names one sample (`docs/store-semantics.md`, item 24), and what an app learns of the write order is
/// what it may see, on both engines.
extension StoreConformanceTests {
    @Test(arguments: Engine.allCases) func aDerivedIdNamesOnlyItsOwnSample(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        try await store.setAuthorization(
            app: "app",
            [
                TypeAuthorization(type: "heartRate", read: false, share: true),
                TypeAuthorization(type: "heartbeatSeries", read: false, share: true),
            ])
        let at = Instant(seconds: 10)
        let squatted = QuantitySample.derivedID(
            type: "heartRate", source: Self.gateway.identifier, device: nil, start: at, end: at)
        for caller in [Caller.app("app"), .owner] {
            let squatter = QuantitySample(
                id: squatted, type: .heartRate, start: at, end: at, value: 99, source: Source(identifier: "app"))
            await #expect(throws: InvalidSampleError.self) { try await store.save([squatter], as: caller) }
            let series = HeartbeatSeriesSample(
                id: squatted, start: at, end: Instant(seconds: 11),
                beats: [Beat(offsetMilliseconds: 0, rrMilliseconds: 800)], source: Source(identifier: "app"))
            await #expect(throws: InvalidSampleError.self) { try await store.save([series], as: caller) }
        }
        let own = QuantitySample.derivedID(type: "heartRate", source: "app", device: nil, start: at, end: at)
        let versioned = QuantitySample(
            id: own, type: .heartRate, start: at, end: at, value: 99, source: Source(identifier: "app"),
            metadata: [MetadataKey.externalUUID: .string("x")])
        await #expect(throws: InvalidSampleError.self) { try await store.save([versioned], as: .app("app")) }
        // Other forms are the writer's to choose; the sample's own derived id is the same as none.
        let chosen = QuantitySample(
            id: UUID(), type: .heartRate, start: at, end: at, value: 70, source: Source(identifier: "app"))
        let derived = QuantitySample(
            id: own, type: .heartRate, start: at, end: at, value: 70, source: Source(identifier: "app"))
        #expect(try await store.save([chosen], as: .owner) == [.inserted])
        #expect(try await store.save([derived], as: .app("app")) == [.duplicate])
        let measured = QuantitySample(type: .heartRate, start: at, end: at, value: 60, source: Self.gateway)
        #expect(try await store.save([measured], as: .owner) == [.inserted])
        let stored = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(stored.filter { $0.id == squatted }.map(\.value) == [60])
    }

    @Test(arguments: Engine.allCases) func theLatestAnchorIsWhatTheCallerMaySee(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: false, share: true)])
        #expect(try await store.latestAnchor(of: [.heartRate, .stepCount], as: .app("app")) == 0)
        let own = QuantitySample(
            type: .heartRate, start: Instant(seconds: 5), end: Instant(seconds: 5), value: 70,
            source: Source(identifier: "app"))
        _ = try await store.save([own], as: .app("app"))
        let mine = try await store.changes(of: .heartRate, since: 0, limit: 10, as: .app("app")).anchor
        #expect(mine > 0)
        let others = (1...3).map { second in
            QuantitySample(
                type: .heartRate, start: Instant(seconds: Int64(second) * 10),
                end: Instant(seconds: Int64(second) * 10), value: 60, source: Self.gateway)
        }
        _ = try await store.save(others, as: .owner)
        #expect(try await store.latestAnchor(of: [.heartRate], as: .app("app")) == mine)
        let all = try await store.changes(of: .heartRate, since: 0, limit: 10, as: .owner).anchor
        #expect(all > mine)
        #expect(try await store.latestAnchor(of: [.heartRate, .stepCount], as: .owner) == all)
        // Changes of a type nothing was written of are logged too.
        _ = try await store.changes(of: .stepCadence, since: 0, limit: 10, as: .app("app"))
        #expect(try await store.accessLog(limit: 10).contains { $0.operation == .changes && $0.type == "stepCadence" })
    }
}
