import Foundation
import Health
import PostgresStore
import SQLiteStore
import StoreEngine
import Stores
import TestSupport
import Testing

/// The engines the conformance suite runs against.
enum Engine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A SQLite file in a temporary folder.
    case sqlite
    /// A fresh database on the test process's throwaway PostgreSQL server (``PostgresServer/shared()``).
    case postgresql

    var testDescription: String { rawValue }
}

/// Where a test's store lives: a folder or a database, removed by ``remove()``; ``reopen()`` opens it again.
struct Storage: Sendable {
    var engine: Engine
    /// The SQLite file, or the PostgreSQL connection string.
    var location: String
    var now: @Sendable () -> Instant

    func reopen() throws -> any HealthStoreEngine {
        switch engine {
        case .sqlite: try openStore(.sqlite(path: location), now: now)
        case .postgresql: try openStore(.postgresql(url: location), now: now)
        }
    }

    func remove() {
        switch engine {
        case .sqlite:
            try? FileManager.default.removeItem(atPath: (location as NSString).deletingLastPathComponent)
        case .postgresql:
            guard let name = location.split(separator: "=").last else { return }
            _ = try? PostgresServer.shared().psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }
}

/// A new, empty store of `engine`.
func makeStore(_ engine: Engine, now: @escaping @Sendable () -> Instant = { Instant.now }) throws -> (
    any HealthStoreEngine, Storage
) {
    let location: String
    switch engine {
    case .sqlite:
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-tests-\(UUID().uuidString)")
        location = directory.appendingPathComponent("health.db").path
    case .postgresql:
        location = try PostgresServer.shared().createDatabase()
    }
    let storage = Storage(engine: engine, location: location, now: now)
    return (try storage.reopen(), storage)
}
