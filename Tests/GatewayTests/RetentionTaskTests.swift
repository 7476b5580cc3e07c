import FakeDevices
import Foundation
import Gateway
import Health
import SQLiteStore
import Support
import Testing

/// The service applies the store's retention itself: when it starts and then every day, on its clock.
@Suite(.timeLimit(.minutes(1))) struct RetentionTaskTests {
    @Test func theServicePrunesWhenItStartsAndAgainADayLater() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("retention-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock(wallMicroseconds: 1_795_946_400_000_000)
        let store = try SQLiteHealthStore(
            path: directory.appendingPathComponent("health.db").path, now: { Instant.now(on: clock) })
        try await store.setRetention(of: .heartRate, days: 1)
        let now = Instant.now(on: clock).milliseconds
        func heartRate(endedHoursAgo hours: Int64) -> QuantitySample {
            let end = Instant(milliseconds: now - hours * 3_600_000)
            return QuantitySample(
                type: .heartRate, start: end, end: end, value: 70, source: Source(identifier: "org.example.strap"))
        }
        // Past the retention already; and an hour old, past it a day later.
        _ = try await store.save([heartRate(endedHoursAgo: 30), heartRate(endedHoursAgo: 1)], as: .owner)
        let writer = StoreWriter(sink: HealthStoreSink(store: store), clock: clock)
        let service = GatewayService(
            central: FakeCentral(), registry: store, writer: writer,
            settings: .init(source: Source(identifier: "wearhouse", version: "test")),
            log: ServiceLog(level: .warning, destination: .standardError), clock: clock,
            prune: { try await store.prune() })
        func stored() async throws -> Int {
            try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count
        }
        try await withThrowingDiscardingTaskGroup { group throws in
            group.addTask { try await service.run() }
            await service.retentionPasses(atLeast: 1)
            #expect(try await stored() == 1)
            clock.advance(by: .seconds(86_399))
            await service.settled()
            #expect(try await stored() == 1)
            clock.advance(by: .seconds(1))
            await service.retentionPasses(atLeast: 2)
            #expect(try await stored() == 0)
            await service.stop()
        }
    }
}
