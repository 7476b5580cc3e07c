import Foundation
import Health
import SQLiteStore
import Testing

/// The access log spans two files: writes log inside their own transaction (in the store), everything else in
/// the side file; reading it merges both, newest first.
@Suite struct SQLiteAccessLogTests {
    @Test func writesAndReadsAreLoggedInTimeOrderAcrossBothFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("health.db").path
        let clock = Clock()
        let store = try SQLiteHealthStore(path: path, now: { clock.tick() })
        try await store.setAuthorization(
            app: "reader", [TypeAuthorization(type: "heartRate", read: true, share: false)])
        let sample = QuantitySample(
            type: .heartRate, start: Instant(seconds: 100), end: Instant(seconds: 100), value: 70,
            source: Source(identifier: "org.wearhouse.gateway"))
        _ = try await store.save(SampleBatch([sample]), as: .owner)  // logged with the write
        _ = try await store.samples(SampleQuery(type: .heartRate), as: .app("reader"))  // logged beside it
        await #expect(throws: NotAuthorizedError.self) { try await store.save([sample], as: .app("reader")) }
        _ = try await store.save([sample], as: .owner)  // a duplicate, still a write: added to the minute's entry
        clock.advance(seconds: 120)
        _ = try await store.save([sample], as: .owner)  // another minute, another entry

        let reopened = try SQLiteHealthStore(path: path)
        let log = try await reopened.accessLog(limit: 10)
        #expect(log.map(\.operation) == [.save, .save, .save, .query, .grant])
        #expect(log.map(\.denied) == [false, false, true, false, false])
        #expect(log.map(\.caller) == [.owner, .owner, .app("reader"), .app("reader"), .owner])
        #expect(log.map(\.sampleCount) == [1, 2, 0, 1, 0])
        #expect(log[0].type == "heartRate")
        #expect(zip(log, log.dropFirst()).allSatisfy { $0.at >= $1.at })
        #expect(try await reopened.accessLog(limit: 2).count == 2)
    }

    /// A clock that moves one second a call, so that every entry has its own time.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var seconds: Int64 = 1_700_000_040  // a whole minute
        func tick() -> Instant {
            lock.lock()
            defer { lock.unlock() }
            seconds += 1
            return Instant(seconds: seconds)
        }
        func advance(seconds more: Int64) {
            lock.lock()
            defer { lock.unlock() }
            seconds += more
        }
    }
}
