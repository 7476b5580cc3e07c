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

    /// An app calling in a loop cannot grow the side file without bound: it keeps its newest entries up to its
    /// capacity, and pruning drops entries older than ``SQLiteHealthStore/accessLogDays``.
    @Test func theAccessLogIsBoundedAndPruned() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("health.db").path
        let clock = Clock()
        let store = try SQLiteHealthStore(path: path, now: { clock.tick() }, accessLogEntries: 20)
        try await store.setAuthorization(
            app: "looper", [TypeAuthorization(type: "heartRate", read: true, share: true)])
        for _ in 0..<200 { _ = try await store.samples(SampleQuery(type: .heartRate), as: .app("looper")) }
        let queries = try await store.accessLog(limit: 1_000).filter { $0.operation == .query }
        #expect(queries.count == 20)
        let sample = QuantitySample(
            type: .heartRate, start: Instant(seconds: 100), end: Instant(seconds: 100), value: 70,
            source: Source(identifier: "looper"))
        _ = try await store.save([sample], as: .app("looper"))
        clock.advance(seconds: Int64(SQLiteHealthStore.accessLogDays) * 86_400 + 120)
        _ = try await store.samples(SampleQuery(type: .heartRate), as: .app("looper"))
        try await store.prune()
        let left = try await store.accessLog(limit: 1_000)
        #expect(left.map(\.operation) == [.query])
    }

    /// A damaged side file takes neither the store nor the commands that do not need it down: the error names the
    /// access log, and writes and the owner's reads go on.
    @Test func aCorruptSideFileIsNamedAndTheStoreStillWorks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("health.db").path
        _ = try SQLiteHealthStore(path: path)
        for suffix in ["-access-wal", "-access-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try Data(repeating: 0x5A, count: 8_192).write(to: URL(fileURLWithPath: path + "-access"))

        let store = try SQLiteHealthStore(path: path)
        #expect(store.accessLogProblem?.contains("the access log \(path)-access cannot be used") == true)
        let sample = QuantitySample(
            type: .heartRate, start: Instant(seconds: 100), end: Instant(seconds: 100), value: 70,
            source: Source(identifier: "org.wearhouse.gateway"))
        #expect(try await store.save([sample], as: .owner) == [.inserted])
        #expect(try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 1)
        try await store.setAuthorization(
            app: "reader", [TypeAuthorization(type: "heartRate", read: true, share: false)])
        do {
            _ = try await store.samples(SampleQuery(type: .heartRate), as: .app("reader"))
            Issue.record("an app's read went unlogged")
        } catch {
            #expect("\(error)".contains("\(path)-access"))
        }
        await #expect(throws: SQLiteError.self) { try await store.accessLog(limit: 10) }
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
