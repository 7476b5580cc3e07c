import Foundation
import Health
import StoreEngine
import Stores
import TestSupport
import Testing

@testable import PostgresStore
@testable import SQLiteStore

/// Stores made before the characteristics table (SQLite schema 11, PostgreSQL schema 2) open with the new code,
/// keep what they held, and take characteristics and category samples.
@Suite struct CharacteristicsMigrationTests {
    static let app = "com.example.age"

    static func checkMigrated(_ store: any HealthStoreEngine, version: Int) async throws {
        #expect(try await store.summary().schemaVersion == version)
        #expect(
            try await store.apps().first?.grants == [TypeAuthorization(type: "dateOfBirth", read: true, share: false)])
        #expect(try await store.characteristics(of: nil, as: .owner) == Characteristics())
        try await store.setCharacteristic(
            .dateOfBirth, to: try Characteristics.Value(parsing: "1990-02-02", for: .dateOfBirth), of: nil, as: .owner)
        let read = try await store.characteristics(of: nil, as: .app(Self.app))
        #expect(read.dateOfBirth == (try LocalDateTime(year: 1990, month: 2, day: 2)))
        let night = QuantitySample(
            type: .sleepAnalysis, start: Instant(seconds: 0), end: Instant(seconds: 3_600), value: 4,
            source: Source(identifier: "com.example.sleep"))
        #expect(try await store.save([night], as: .owner) == [.inserted])
    }

    @Test func aSchema11SQLiteStoreMigrates() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("health.db").path
        do {
            let old = try SQLiteConnection(path: path)
            for (index, migration) in SQLiteSchema.migrations.prefix(11).enumerated() {
                try old.execute(migration)
                try old.execute("PRAGMA user_version = \(index + 1)")
            }
            try old.execute(
                "INSERT INTO grants (app, type, read, share) VALUES ('\(Self.app)', 'dateOfBirth', 1, 0)")
        }
        try await Self.checkMigrated(try SQLiteHealthStore(path: path), version: SQLiteSchema.migrations.count)
    }

    @Test func aSchema2PostgreSQLStoreMigrates() async throws {
        let server = try PostgresServer.shared()
        let location = try server.createDatabase()
        let name = String(location.split(separator: "=").last ?? "")
        defer { _ = try? server.psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        _ = try server.psql(
            "CREATE TABLE wearhouse_schema (version integer NOT NULL); INSERT INTO wearhouse_schema VALUES (2);"
                + PostgresSchema.migrations.prefix(2).joined(separator: "\n")
                + "INSERT INTO grants (app, type, read, share) VALUES ('\(Self.app)', 'dateOfBirth', true, false);",
            database: name)
        try await Self.checkMigrated(
            try openStore(.postgresql(url: location)), version: PostgresSchema.migrations.count)
    }
}
