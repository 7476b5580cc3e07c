import Foundation
import Health
import Synchronization
import Testing

@testable import SQLiteStore

/// Two connections to one store (the app API's and the gateway's, in `wearhouse run`): a writer waits for the
/// other's transaction and never answers `database is locked`.
@Suite struct SQLiteBusyTests {
    static func sample(_ second: Int64, source: String) -> QuantitySample {
        QuantitySample(
            type: .heartRate, start: Instant(seconds: second), end: Instant(seconds: second), value: 70,
            source: Source(identifier: source))
    }

    /// An app's save reads its grant before its transaction begins; when the other connection commits in between,
    /// the write lock was taken over a stale read snapshot, which SQLite refuses at once (`SQLITE_BUSY_SNAPSHOT`,
    /// without waiting).
    @Test func aWriteAfterAnotherConnectionCommittedBehindAnOpenReadIsNotBusy() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-busy-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("health.db").path
        let api = try SQLiteHealthStore(path: path)
        let gateway = try SQLiteHealthStore(path: path)
        try await gateway.setAuthorization(
            app: "probe", [TypeAuthorization(type: "heartRate", read: false, share: true)])
        _ = try await gateway.save([Self.sample(1, source: "gateway")], as: .owner)
        // The API's connection reads (the statement stays open, as the grant check's does within a save) ...
        #expect(try await api.existingTypeID("heartRate") != nil)
        // ... the gateway commits ...
        _ = try await gateway.save([Self.sample(2, source: "gateway")], as: .owner)
        // ... and the app's write still goes in.
        #expect(try await api.save([Self.sample(3, source: "probe")], as: .app("probe")) == [.inserted])
        #expect(try await gateway.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == 3)
    }

    /// Many apps' writes on one connection and the gateway's on another, all at once: none is refused.
    @Test func concurrentWritersOnTwoConnectionsGetNoBusyAnswers() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-busy-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("health.db").path
        let api = try SQLiteHealthStore(path: path, durability: .normal)
        let gateway = try SQLiteHealthStore(path: path, durability: .normal)
        let apps = (0..<8).map { "app\($0)" }
        for app in apps {
            try await gateway.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: false, share: true)])
        }
        let writes = 40
        let failures = await withTaskGroup(of: [String].self) { group in
            group.addTask {
                var failures: [String] = []
                for second in 0..<Int64(writes * apps.count) {
                    do {
                        _ = try await gateway.save([Self.sample(second, source: "gateway")], as: .owner)
                    } catch {
                        failures.append("gateway: \(error)")
                    }
                }
                return failures
            }
            for app in apps {
                group.addTask {
                    var failures: [String] = []
                    for second in 0..<Int64(writes) {
                        do {
                            _ = try await api.save([Self.sample(second, source: app)], as: .app(app))
                        } catch {
                            failures.append("\(app): \(error)")
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures == [])
        #expect(
            try await api.samples(SampleQuery(type: .heartRate), as: .owner).samples.count == writes * apps.count * 2)
    }

    /// Two processes opening a new store at once (`wearhouse run` and `wearhouse pair`, several `pair`s) both read
    /// schema version 0; the second takes the write lock once the first committed every migration. Its migration
    /// must then find the store migrated, not create the tables again ("table types already exists").
    @Test func aMigrationAnotherConnectionAppliedMeanwhileIsNotAppliedAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-busy-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("health.db").path
        let late = try SQLiteConnection(path: path)
        #expect(try late.scalarInt("PRAGMA user_version") == 0)  // what the second process read
        _ = try SQLiteHealthStore(path: path)  // the first one creates the store meanwhile
        for index in SQLiteSchema.migrations.indices { try SQLiteHealthStore.applyMigration(index, on: late) }
        #expect(try late.scalarInt("PRAGMA user_version") == Int64(SQLiteSchema.currentVersion))
        _ = try SQLiteHealthStore(path: path)
    }

    /// Several stores opened on one new file at once, each on its own thread: every one opens.
    @Test func storesOpenedAtOnceOnANewFileAllOpen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-busy-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("health.db").path
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                _ = try SQLiteHealthStore(path: path)
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
    }
}
