import Foundation
import Health
import StoreEngine
import TestSupport
import Testing

/// Values an app can send that once trapped the service (an overflow in the rollup bucket, a double that does not
/// fit an Int64): each is refused as an invalid sample, on both engines, and the store keeps working.
extension StoreConformanceTests {
    @Test(arguments: Engine.allCases) func timesOutsideTheYears1To9999AreRefused(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        let limits = Instant.supportedMilliseconds
        for (start, end) in [
            (Int64.min, Int64.min), (Int64.max, Int64.max), (Int64.min, 0), (0, Int64.max),
            (limits.lowerBound - 1, limits.lowerBound), (limits.upperBound, limits.upperBound + 1),
        ] {
            let sample = QuantitySample(
                type: .heartRate, start: Instant(milliseconds: start), end: Instant(milliseconds: end), value: 60,
                source: Source(identifier: "app"))
            for caller in [Caller.app("app"), .owner] {
                await #expect(throws: InvalidSampleError.self, "\(start)...\(end)") {
                    try await store.save([sample], as: caller)
                }
            }
            let series = HeartbeatSeriesSample(
                start: Instant(milliseconds: start), end: Instant(milliseconds: end),
                beats: [Beat(offsetMilliseconds: 0, rrMilliseconds: 800, precededByGap: false)],
                source: Self.gateway)
            await #expect(throws: InvalidSampleError.self) { try await store.save([series], as: .owner) }
        }
        let first = QuantitySample(
            type: .heartRate, start: Instant(milliseconds: limits.lowerBound),
            end: Instant(milliseconds: limits.lowerBound), value: 60, source: Source(identifier: "app"))
        let last = QuantitySample(
            type: .heartRate, start: Instant(milliseconds: limits.upperBound),
            end: Instant(milliseconds: limits.upperBound), value: 60, source: Source(identifier: "app"))
        #expect(try await store.save([first, last], as: .app("app")) == [.inserted, .inserted])
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 2)
    }

    @Test(arguments: Engine.allCases) func aSyncVersionThatIsNotAWholeNumberIsRefused(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        for version in [1e300, -1, 1.5, 9_007_199_254_740_994, -.infinity] as [Double] {
            let sample = QuantitySample(
                type: .heartRate, start: Instant(seconds: 10), end: Instant(seconds: 10), value: 60,
                source: Source(identifier: "app"),
                metadata: [MetadataKey.externalUUID: .string("x"), MetadataKey.syncVersion: .number(version)])
            await #expect(throws: InvalidSampleError.self, "\(version)") {
                try await store.save([sample], as: .app("app"))
            }
        }
        let sample = QuantitySample(
            type: .heartRate, start: Instant(seconds: 10), end: Instant(seconds: 10), value: 60,
            source: Source(identifier: "app"),
            metadata: [MetadataKey.externalUUID: .string("x"), MetadataKey.syncVersion: .number(9_007_199_254_740_992)])
        #expect(try await store.save([sample], as: .app("app")) == [.inserted])
    }
}

/// A retention period beyond 100 years once was stored and made every later prune trap (an overflow in the
/// cutoff): both engines refuse it, and the longest allowed period prunes nothing recent.
extension StoreConformanceTests {
    @Test(arguments: Engine.allCases) func aRetentionBeyondAHundredYearsIsRefused(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine, now: { Instant(seconds: 10 * 86_400) })
        defer { storage.remove() }
        _ = try await store.save([heartRate(0, 60)], as: .owner)
        for days in [RetentionLimits.days.upperBound + 1, 999_999_999_999_999, Int.max, 0, -1] {
            await #expect(throws: InvalidSampleError.self, "\(days)") {
                try await store.setRetention(of: .heartRate, days: days)
            }
        }
        #expect(try await store.retention().isEmpty)
        try await store.setRetention(of: .heartRate, days: RetentionLimits.days.upperBound)
        #expect(try await store.prune() == 0)
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 1)
    }
}
