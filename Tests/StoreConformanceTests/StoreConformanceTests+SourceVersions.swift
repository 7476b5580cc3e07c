import Foundation
import Health
import StoreEngine
import TestSupport
import Testing

/// A sample's source is an app at a version (HealthKit's source revision), and the version is kept with each sample;
/// but the natural key (`docs/store-semantics.md`, item 21), client ids (item 22) and heartbeat series' keys belong
/// to the app, whatever its version: a gateway upgraded between two replays of one trace, or an app updated between
/// two saves of one measurement, writes the same samples again, on both engines and on every path.
extension StoreConformanceTests {
    static let upgraded = Source(identifier: gateway.identifier, version: "0.2.0")

    func heartRate(_ second: Int64, _ bpm: Double, from source: Source) -> QuantitySample {
        QuantitySample(
            type: .heartRate, start: Instant(seconds: second), end: Instant(seconds: second), value: bpm,
            source: source, device: Self.strap, subject: "alice",
            metadata: [MetadataKey.heartRateSensorLocation: .number(1)])
    }

    @Test(arguments: Engine.allCases) func aNewVersionOfASourceWritesTheSameSamplesAgain(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let first = (0..<5).map { heartRate(100 + $0, 70, from: Self.gateway) }
        #expect(try await store.save(first, as: .owner) == Array(repeating: .inserted, count: 5))
        // The owner's path (a dense series: chunks on SQLite), sample by sample and as a batch of series.
        let again = (0..<5).map { heartRate(100 + $0, 70, from: Self.upgraded) }
        #expect(try await store.save(again, as: .owner) == Array(repeating: .duplicate, count: 5))
        #expect(try await store.save(SampleBatch(again), as: .owner) == Array(repeating: .duplicate, count: 5))
        let mixed = [heartRate(103, 71, from: Self.upgraded), heartRate(105, 72, from: Self.upgraded)]
        #expect(try await store.save(mixed, as: .owner) == [.conflict, .inserted])
        // After the old version's last sample (the upgraded gateway live), then that again.
        let later = (0..<3).map { heartRate(300 + $0, 80, from: Self.upgraded) }
        #expect(try await store.save(later, as: .owner) == Array(repeating: .inserted, count: 3))
        #expect(try await store.save(later, as: .owner) == Array(repeating: .duplicate, count: 3))
        // One batch written at both versions: a key once.
        let both = [heartRate(400, 90, from: Self.gateway), heartRate(400, 90, from: Self.upgraded)]
        #expect(try await store.save(both, as: .owner) == [.inserted, .duplicate])
        // One sample with an id of its own (not derived): the same measurement again.
        var identified = heartRate(101, 70, from: Self.upgraded)
        identified.id = UUID()
        #expect(try await store.save([identified], as: .owner) == [.duplicate])
        // An app's rows.
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        let app = Source(identifier: "app", version: "1")
        let updated = Source(identifier: "app", version: "2")
        func appRate(_ second: Int64, _ bpm: Double, _ source: Source) -> QuantitySample {
            QuantitySample(
                type: .heartRate, start: Instant(seconds: second), end: Instant(seconds: second), value: bpm,
                source: source)
        }
        #expect(try await store.save([appRate(200, 60, app)], as: .app("app")) == [.inserted])
        #expect(try await store.save([appRate(200, 60, updated)], as: .app("app")) == [.duplicate])
        #expect(try await store.save([appRate(200, 61, updated)], as: .app("app")) == [.conflict])

        let stored = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(stored.count == 11)
        // Each keeps the version that wrote it first.
        // (Closures outside #expect: Tests/Package/closure_audit.py says why.)
        let byUpgraded = stored.filter { $0.source.version == "0.2.0" }.map(\.start.milliseconds)
        let appVersions = stored.filter { $0.source.identifier == "app" }.map(\.source.version)
        #expect(byUpgraded == [105_000, 300_000, 301_000, 302_000])
        #expect(appVersions == ["1"])
        #expect(Set(stored.map(\.id)).count == stored.count)
    }

    @Test(arguments: Engine.allCases) func aClientIDBelongsToTheAppWhateverItsVersion(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        func steps(_ value: Double, sync: Double, version: String) -> QuantitySample {
            QuantitySample(
                type: .stepCount, start: Instant(seconds: 1_000), end: Instant(seconds: 1_600), value: value,
                source: Source(identifier: "com.example.logger", version: version),
                metadata: [MetadataKey.externalUUID: .string("walk-1"), MetadataKey.syncVersion: .number(sync)])
        }
        #expect(try await store.save([steps(100, sync: 1, version: "1.0")], as: .owner) == [.inserted])
        #expect(try await store.save([steps(100, sync: 1, version: "1.1")], as: .owner) == [.duplicate])
        #expect(try await store.save([steps(100, sync: 0, version: "1.1")], as: .owner) == [.stale])
        #expect(try await store.save([steps(120, sync: 2, version: "1.1")], as: .owner) == [.replaced])
        let stored = try await store.samples(SampleQuery(type: .stepCount), as: .owner).samples
        #expect(stored.map(\.value) == [120])
        #expect(stored.first?.source.version == "1.1")
    }

    @Test(arguments: Engine.allCases) func aHeartbeatSeriesIsTheSameSeriesFromANewVersion(_ engine: Engine)
        async throws
    {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        func series(_ source: Source, rr: Double = 800) -> HeartbeatSeriesSample {
            HeartbeatSeriesSample(
                start: Instant(seconds: 300), end: Instant(seconds: 301),
                beats: [
                    Beat(offsetMilliseconds: 0, rrMilliseconds: rr, precededByGap: false),
                    Beat(offsetMilliseconds: rr, rrMilliseconds: rr, precededByGap: false),
                ], source: source, device: Self.strap, subject: "alice")
        }
        #expect(try await store.save(SampleBatch([], heartbeats: [series(Self.gateway)]), as: .owner) == [.inserted])
        #expect(try await store.save(SampleBatch([], heartbeats: [series(Self.upgraded)]), as: .owner) == [.duplicate])
        #expect(
            try await store.save(SampleBatch([], heartbeats: [series(Self.upgraded, rr: 810)]), as: .owner) == [
                .conflict
            ])
        // With an id of its own, given again by the new version.
        var identified = series(Self.gateway)
        identified.id = UUID()
        identified.start = Instant(seconds: 400)
        identified.end = Instant(seconds: 401)
        #expect(try await store.save(SampleBatch([], heartbeats: [identified]), as: .owner) == [.inserted])
        identified.source = Self.upgraded
        #expect(try await store.save(SampleBatch([], heartbeats: [identified]), as: .owner) == [.duplicate])
        let stored = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        #expect(stored.map(\.source.version) == ["0.1.0", "0.1.0"])
    }
}
