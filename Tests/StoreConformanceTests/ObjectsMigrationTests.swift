import Foundation
import Health
import StoreEngine
import Stores
import TestSupport
import Testing

@testable import PostgresStore
@testable import SQLiteStore

/// Stores made before the correlation and workout tables (found by content, whatever their number) open with the
/// new code, keep their grants, and take correlations and workouts.
@Suite struct ObjectsMigrationTests {
    static let app = "com.example.cuff"

    static func checkMigrated(_ store: any HealthStoreEngine, version: Int) async throws {
        #expect(try await store.summary().schemaVersion == version)
        let source = Source(identifier: app)
        let reading = Correlation.bloodPressure(systolic: 118, diastolic: 76, at: Instant(seconds: 60), source: source)
        #expect(try await store.save([reading], as: .app(app)) == [.inserted])
        #expect(try await store.correlations(SampleQuery(type: .bloodPressure), as: .owner).correlations.count == 1)
        let walk = Workout(
            activityType: .walking, start: Instant(seconds: 0), end: Instant(seconds: 1_800), source: source)
        #expect(try await store.save([walk], as: .owner) == [.inserted])
        #expect(try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts == [walk])
    }

    static let grants = ["bloodPressureSystolic", "bloodPressureDiastolic"]

    @Test func anSQLiteStoreFromBeforeObjectsMigrates() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("health.db").path
        let before = try #require(SQLiteSchema.migrations.firstIndex { $0.contains("CREATE TABLE objects") })
        do {
            let old = try SQLiteConnection(path: path)
            for (index, migration) in SQLiteSchema.migrations.prefix(before).enumerated() {
                try old.execute(migration)
                try SQLiteSchema.finish(migrationTo: index + 1, on: old)
                try old.execute("PRAGMA user_version = \(index + 1)")
            }
            for type in Self.grants {
                try old.execute("INSERT INTO grants (app, type, read, share) VALUES ('\(Self.app)', '\(type)', 1, 1)")
            }
        }
        try await Self.checkMigrated(try SQLiteHealthStore(path: path), version: SQLiteSchema.migrations.count)
    }

    @Test func aPostgreSQLStoreFromBeforeObjectsMigrates() async throws {
        let server = try PostgresServer.shared()
        let location = try server.createDatabase()
        let name = String(location.split(separator: "=").last ?? "")
        defer { _ = try? server.psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        let before = try #require(PostgresSchema.migrations.firstIndex { $0.contains("CREATE TABLE objects") })
        _ = try server.psql(
            "CREATE TABLE wearhouse_schema (version integer NOT NULL); INSERT INTO wearhouse_schema VALUES (\(before));"
                + PostgresSchema.migrations.prefix(before).joined(separator: "\n")
                + Self.grants.map {
                    "INSERT INTO grants (app, type, read, share) VALUES ('\(Self.app)', '\($0)', true, true);"
                }.joined(),
            database: name)
        try await Self.checkMigrated(
            try openStore(.postgresql(url: location)), version: PostgresSchema.migrations.count)
    }
}
