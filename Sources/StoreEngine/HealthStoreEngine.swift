public import Foundation
public import Health

/// What the command line, `doctor` and the tests use of a store beyond ``HealthStore``, whichever engine holds
/// it: the sensor registry, retention, pruning and a summary. Both engines conform; ``openStore(_:mustExist:)``
/// (module `Stores`) opens either by its URL.
public protocol HealthStoreEngine: HealthStore, SensorRegistry {
    /// Where the store is, for people: the SQLite path, or the PostgreSQL URL without its password.
    nonisolated var location: String { get }
    /// Integrity, size, schema version and counts (`wearhouse store check`).
    func summary() async throws -> StoreSummary
    /// Days kept per type identifier, for the types that have a retention set.
    func retention() async throws -> [String: Int]
    /// Keeps `type`'s samples for `days` (`nil`: forever).
    func setRetention(of type: HealthType, days: Int?) async throws
    /// Deletes the samples older than their type's retention; returns how many were deleted.
    func prune() async throws -> Int
    /// How many samples ``prune()`` would delete now: it runs the same deletion and rolls it back.
    func pruneCount() async throws -> Int
    /// How many samples `delete(ids, as: caller)` would delete now: it runs the same deletion and rolls it back
    /// (ids that match nothing, or were given twice, are not counted).
    func deletionCount(_ ids: [UUID], as caller: Caller) async throws -> Int
    /// Saves the batches `next` hands out, one after the other, in one write transaction: when a batch is refused
    /// (``InvalidSampleError``, its index within that batch) or `next` throws, nothing of any batch is stored.
    /// Each batch goes through ``HealthStore/save(_:as:)-(SampleBatch,_)`` and its rollups are written before
    /// the next is asked for, so the memory held is one batch whatever the total (`wearhouse import-samples`).
    /// Returns the outcomes, counted.
    func saveAll(as caller: Caller, _ next: @Sendable () throws -> SampleBatch?) async throws -> [WriteOutcome: Int]

    /// ``HealthStore/samples(_:as:)`` column by column: the same samples, in the same order, with the same paging
    /// and cursor, and logged the same way, as a ``SampleColumns`` page (what `export` and `samples` write from).
    func sampleColumns(_ query: SampleQuery, as caller: Caller) async throws -> SampleColumns

    /// Every person the store names, sorted: the subjects of samples and series (a name stays after its samples
    /// are deleted), of characteristics and of the sensor registry; at most ``maximumSubjectsListed``. For the
    /// owner (the web app's people picker), not logged.
    func subjects() async throws -> [String]
}

/// The most names ``HealthStoreEngine/subjects()`` returns.
public let maximumSubjectsListed = 10_000

/// The query both engines run for ``HealthStoreEngine/subjects()`` (their tables have the same names).
public let subjectsQuery = """
    SELECT name FROM subjects WHERE name <> ''
    UNION SELECT subject FROM characteristics WHERE subject <> ''
    UNION SELECT subject FROM sensors WHERE subject IS NOT NULL AND subject <> ''
    ORDER BY 1 LIMIT \(maximumSubjectsListed)
    """

/// Thrown inside a write transaction to roll back a rehearsal (``HealthStoreEngine/pruneCount()``,
/// ``HealthStoreEngine/deletionCount(_:as:)``) and carry out the count it made.
public struct RehearsalRollback: Error {
    public let count: Int

    public init(count: Int) {
        self.count = count
    }

    /// Runs `transaction` with a body that counts, and when `rehearse` rolls it back by throwing; either way
    /// returns the count.
    public static func run(
        rehearse: Bool, _ transaction: (_ body: (Int) throws -> Int) throws -> Int
    ) throws -> Int {
        guard rehearse else { return try transaction { $0 } }
        do {
            return try transaction { count in throw RehearsalRollback(count: count) }
        } catch let rehearsal as RehearsalRollback {
            return rehearsal.count
        }
    }
}

/// What `wearhouse store check` shows, for either engine.
public struct StoreSummary: Hashable, Sendable {
    /// `["ok"]`, or the engine's list of problems.
    public var integrity: [String]
    public var bytes: Int64
    public var schemaVersion: Int
    /// Samples per type identifier.
    public var counts: [String: Int]
    public var tombstones: Int

    public init(integrity: [String], bytes: Int64, schemaVersion: Int, counts: [String: Int], tombstones: Int) {
        self.integrity = integrity
        self.bytes = bytes
        self.schemaVersion = schemaVersion
        self.counts = counts
        self.tombstones = tombstones
    }
}
