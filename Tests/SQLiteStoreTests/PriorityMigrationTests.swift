import Foundation
import Health
import Testing

@testable import SQLiteStore

/// A store whose priority lists were set before the unranked policy was kept (raw SQL, or the old API) keeps them,
/// with gap filling, as the merge treated them then.
@Suite struct PriorityMigrationTests {
    @Test func listsSetBeforeThePolicyTableKeepGapFilling() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("health.db").path
        let policies = try #require(
            SQLiteSchema.migrations.firstIndex { $0.contains("CREATE TABLE priority_policies") })
        do {
            let old = try SQLiteConnection(path: path)
            for (index, migration) in SQLiteSchema.migrations.prefix(policies).enumerated() {
                try old.execute(migration)
                try old.execute("PRAGMA user_version = \(index + 1)")
            }
            try old.execute(
                """
                INSERT INTO priorities (type, position, source, device) VALUES
                    ('stepCount', 0, 'com.example.watch', NULL), ('stepCount', 1, 'wearhouse', 'footpod');
                """)
        }
        let store = try SQLiteHealthStore(path: path)
        #expect(
            try await store.priorities() == [
                "stepCount": SourcePriority(
                    order: [
                        Provenance(source: "com.example.watch", device: nil),
                        Provenance(source: "wearhouse", device: "footpod"),
                    ], unranked: .gapFill)
            ])
    }
}
