import Foundation
import Health
import StoreEngine
import TestSupport
import Testing

/// The source query on both engines: every provenance of a type once, from rows, chunks and heartbeat series, and
/// an app without read permission sees only itself.
extension StoreConformanceTests {
    @Test(arguments: Engine.allCases) func theSourceQueryNamesWhoWroteATypeAsFarAsTheCallerMayRead(
        _ engine: Engine
    ) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        // The gateway's strap (owner, chunks on SQLite) and watch, and an app's own rows.
        _ = try await store.save((0..<5).map { heartRate(60 + $0, 70) }, as: .owner)
        _ = try await store.save([heartRate(100, 80, device: Self.watch)], as: .owner)
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: false, share: true)])
        let own = (0..<2).map { index in
            QuantitySample(
                type: .heartRate, start: Instant(seconds: 200 + index), end: Instant(seconds: 200 + index), value: 90,
                source: Source(identifier: "app"))
        }
        _ = try await store.save(own, as: .app("app"))
        let series = HeartbeatSeriesSample(
            start: Instant(seconds: 300), end: Instant(seconds: 360),
            beats: [Beat(offsetMilliseconds: 0, rrMilliseconds: 800, precededByGap: false)], source: Self.gateway,
            device: Self.strap)
        _ = try await store.save([series], as: .owner)

        let all = try await store.sources(of: .heartRate, as: .owner)
        #expect(
            all == [
                SourceSummary(
                    provenance: Provenance(source: "app", device: nil), count: 2, first: Instant(seconds: 200),
                    last: Instant(seconds: 201)),
                SourceSummary(
                    provenance: Provenance(source: Self.gateway.identifier, device: Self.strap.key),
                    deviceName: "Polar H10", count: 5, first: Instant(seconds: 60), last: Instant(seconds: 64)),
                SourceSummary(
                    provenance: Provenance(source: Self.gateway.identifier, device: Self.watch.key),
                    deviceName: "PineTime", count: 1, first: Instant(seconds: 100), last: Instant(seconds: 100)),
            ])
        // Without read permission, the app's answer is what it would be if it alone had written the type.
        #expect(try await store.sources(of: .heartRate, as: .app("app")) == Array(all.prefix(1)))
        #expect(try await store.sources(of: .heartRate, as: .app("stranger")).isEmpty)
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        #expect(try await store.sources(of: .heartRate, as: .app("app")) == all)
        #expect(
            try await store.sources(of: .heartbeatSeries, as: .owner) == [
                SourceSummary(
                    provenance: Provenance(source: Self.gateway.identifier, device: Self.strap.key),
                    deviceName: "Polar H10", count: 1, first: Instant(seconds: 300), last: Instant(seconds: 360))
            ])
        #expect(try await store.sources(of: .stepCount, as: .owner).isEmpty)
    }
}
