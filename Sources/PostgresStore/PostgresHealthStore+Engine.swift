public import StoreEngine

extension PostgresHealthStore: HealthStoreEngine {
    public nonisolated var location: String { redactedURL }

    public func summary() async throws -> StoreSummary {
        let (counts, tombstones) = try counts()
        return StoreSummary(
            integrity: ["ok"], bytes: try databaseSize(), schemaVersion: try schemaVersion(), counts: counts,
            tombstones: tombstones)
    }
}
