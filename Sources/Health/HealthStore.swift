public import Foundation

/// The store every engine implements (SQLite by default, PostgreSQL for fleets), and the one API the gateway,
/// the CLI and the app bus service use. Every call names its ``Caller``; engines enforce grants from it:
///
/// - an app without read permission for a type sees only its own samples of that type, with no hint of denial
///   (HealthKit's rule);
/// - an app without share permission cannot save that type (``NotAuthorizedError``);
/// - the owner sees and writes everything;
/// - every call is recorded in the access log.
public protocol HealthStore: Sendable {
    /// Saves a batch atomically: one invalid sample rejects the whole batch (``InvalidSampleError``) and
    /// nothing of it is written. Writing the same batch twice reports duplicates, never errors.
    func save(_ samples: [QuantitySample], as caller: Caller) async throws -> [WriteOutcome]

    /// The samples matching `query` that `caller` may read, one page at a time. Heartbeat series are not
    /// quantity samples: for `heartbeatSeries` this returns nothing (use ``heartbeatSeries(_:as:)``).
    func samples(_ query: SampleQuery, as caller: Caller) async throws -> SamplePage

    /// Saves heartbeat series under the rules of quantity samples' `save`: the batch is atomic
    /// (``HeartbeatSeriesSample/invalidityReason`` rejects it with ``InvalidSampleError``), an app needs share
    /// permission for `heartbeatSeries` (``NotAuthorizedError``), and the natural key `(source, device, start,
    /// end)` is unique: writing a series again reports `duplicate` (same beats and subject) or `conflict`, and
    /// the first write stands. Series have no `externalUUID` versions: such metadata is kept, not interpreted.
    func save(_ series: [HeartbeatSeriesSample], as caller: Caller) async throws -> [WriteOutcome]

    /// Saves a batch of streams, heartbeat series, samples with their own ids, correlations and workouts under the
    /// same rules. Outcomes (and the index of an ``InvalidSampleError``) follow ``SampleBatch/samples``,
    /// ``SampleBatch/heartbeats``, ``SampleBatch/identified``, ``SampleBatch/correlations``, then
    /// ``SampleBatch/workouts`` (each given its stored samples). The whole batch is one transaction: when it fails,
    /// nothing of it is stored. An engine that keeps streams column by column
    /// saves them without making a sample value per sample.
    func save(_ batch: SampleBatch, as caller: Caller) async throws -> [WriteOutcome]

    /// The heartbeat series matching `query` that `caller` may read, one page at a time, with the filters and
    /// paging of ``samples(_:as:)``; `query.type` must be `heartbeatSeries`, or nothing matches.
    func heartbeatSeries(_ query: SampleQuery, as caller: Caller) async throws -> HeartbeatSeriesPage

    /// Statistics per bucket (`docs/store-semantics.md`): merged sums for cumulative types,
    /// count/avg/min/max/recent/twa for discrete ones, time and count per value for categories
    /// (``CategoryStatistics``), over the samples `caller` may read, filters applied before the merge.
    func statistics(_ query: StatisticsQuery, as caller: Caller) async throws -> [StatisticsResult]

    /// Saves correlations, each with its members, in one transaction (``Correlation``): one invalid correlation
    /// (``Correlation/invalidityReason``, or a member that conflicts with a stored sample) rejects the batch with
    /// ``InvalidSampleError`` and nothing is stored. An app needs share permission for every member type
    /// (``NotAuthorizedError``); the correlation type itself is not granted (HealthKit's rule). Saving a
    /// correlation again reports `duplicate` (same members and subject) or `conflict`, and the first write stands.
    func save(_ correlations: [Correlation], as caller: Caller) async throws -> [WriteOutcome]

    /// The correlations of `query.type` (`bloodPressure` or `food`) matching `query`, with their members, one page
    /// at a time. An app sees a correlation it saved, and one whose member types it may all read; any other is
    /// absent, as if never saved. Metadata predicates apply to the correlation's own metadata.
    func correlations(_ query: SampleQuery, as caller: Caller) async throws -> CorrelationPage

    /// Saves workouts under the rules of samples' `save`: atomic (``Workout/invalidityReason``), share permission
    /// for `workout`, and saving one again reports `duplicate` or `conflict`.
    func save(_ workouts: [Workout], as caller: Caller) async throws -> [WriteOutcome]

    /// The workouts matching `query` (whose type is `workout`) that `caller` may read, one page at a time: an app
    /// without read permission for `workout` sees only its own.
    func workouts(_ query: SampleQuery, as caller: Caller) async throws -> WorkoutPage

    /// Associates stored samples (quantity and category samples, by id) with a workout, for the
    /// ``SampleQuery/workout`` predicate; returns how many were newly associated. An app may add only to a workout
    /// it saved; every sample must be one `caller` may read, else ``InvalidSampleError`` names it (a sample the
    /// caller may not read is reported as missing) and nothing is added.
    func add(_ sampleIDs: [UUID], to workout: UUID, as caller: Caller) async throws -> Int

    /// The ids of the samples associated with `workout`, by type identifier, as far as `caller` may read their
    /// types (the owner: all); empty for an unknown workout or one the caller may not read.
    func workoutSampleIDs(_ workout: UUID, as caller: Caller) async throws -> [String: [UUID]]

    /// Deletes samples (quantity samples and heartbeat series), correlations and workouts by id; returns how many
    /// objects were deleted. Each leaves a tombstone for ``changes(of:since:limit:as:)``. Deleting a correlation
    /// deletes its members, and deleting a member deletes its correlation and the other members (each counted);
    /// deleting a workout keeps the samples associated with it, and deleting such a sample ends its association.
    /// Apps may delete only their own objects.
    func delete(_ ids: [UUID], as caller: Caller) async throws -> Int

    /// New and deleted samples of `type` since `anchor` (nil: from the beginning), for apps that sync. New
    /// heartbeat series come in ``ChangeSet/heartbeatSeries``, correlations in ``ChangeSet/correlations``,
    /// workouts in ``ChangeSet/workouts``.
    func changes(of type: HealthType, since anchor: Int64?, limit: Int, as caller: Caller) async throws -> ChangeSet

    /// The anchor after the last change of `types` that `caller` may see: what ``changes(of:since:limit:as:)``
    /// returns once nothing is left, the greatest over the types; 0 when there is none. Changes the caller may
    /// not see (other sources' samples of a type it may not read) do not move it.
    func latestAnchor(of types: [HealthType], as caller: Caller) async throws -> Int64

    /// Sets an app's grants for the given types (owner only).
    func setAuthorization(app: String, _ grants: [TypeAuthorization]) async throws

    /// Every app with its grants and pending requests.
    func apps() async throws -> [AppAuthorization]

    /// Records that `app` asks to read `read` and write `share` (type identifiers), as HealthKit's
    /// `requestAuthorization` does; the owner decides later (``setAuthorization(app:_:)``, which answers every
    /// pending request of the app: what it does not grant is denied). A type and direction already granted or
    /// decided is not asked again. Logged as ``AccessLogEntry/Operation-swift.enum/request``.
    ///
    /// - Returns: whether any of the requested permissions awaits the owner's decision. Never the decision
    ///   itself: an app cannot tell denied from "no data" (`docs/store-semantics.md`, "Permissions").
    func requestAuthorization(app: String, read: [String], share: [String]) async throws -> Bool

    /// Adds an entry to the access log for a call that touches no samples itself (an app starting to observe
    /// a type).
    func recordAccess(_ caller: Caller, _ operation: AccessLogEntry.Operation, type: String?) async throws

    /// The types that got new samples after `anchor` (a write-order number, as ``changes(of:since:limit:as:)``
    /// uses), and the anchor to pass next time; `nil` gives no types and the current anchor. For observers: it
    /// reveals no samples, so it is not logged, and it is cheap when nothing changed.
    func typesWithNewSamples(since anchor: Int64?) async throws -> (types: Set<String>, anchor: Int64)

    /// The most recent access-log entries, newest first.
    func accessLog(limit: Int) async throws -> [AccessLogEntry]

    /// Sets (or, with `nil`, removes) the source priority of `type`'s cumulative merge, or the default priority
    /// of every type without its own when `type` is `nil` (`docs/store-semantics.md`, D2). Owner only: the
    /// engines take it from the CLI, the configuration and the owner's tools.
    func setPriority(of type: HealthType?, _ priority: SourcePriority?) async throws

    /// Every stored priority: the types' own by identifier, and the default under ``defaultPriorityKey``.
    func priorities() async throws -> [String: SourcePriority]

    /// The sources and devices that have written `type` (HealthKit's source query), with their counts, as far as
    /// `caller` may read: an app without read permission sees only its own, so denial looks like having written
    /// nothing else. Logged as a query.
    func sources(of type: HealthType, as caller: Caller) async throws -> [SourceSummary]

    /// The characteristics of `subject` (`nil`: the store's own person) that `caller` may read
    /// (`docs/store-semantics.md`, item 26): all of them for the owner; for an app, those it has a read grant for,
    /// the others absent exactly as if never set (no hint of denial). Logged as a query per characteristic type.
    func characteristics(of subject: String?, as caller: Caller) async throws -> Characteristics

    /// Sets the characteristic `type` of `subject` (`nil`: the store's own person) to `value`, or removes it with
    /// `nil`. Only the owner writes characteristics: an app gets ``NotAuthorizedError`` whatever its grants.
    func setCharacteristic(_ type: HealthType, to value: Characteristics.Value?, of subject: String?, as caller: Caller)
        async throws
}

/// The key of the default priority in ``HealthStore/priorities()``: not a type identifier.
public let defaultPriorityKey = "*"

extension HealthStore {
    /// The statistics of `type` over `workout`'s interval (``StatisticsQuery/init(type:during:)``): HealthKit's
    /// statistics of a workout. `nil` when the workout ends when it starts.
    public func statistics(of type: HealthType, during workout: Workout, as caller: Caller) async throws
        -> StatisticsResult?
    {
        guard let query = try? StatisticsQuery(type: type, during: workout) else { return nil }
        return try await statistics(query, as: caller).first
    }

    /// Ranks `order` (highest first) for `type`; unranked provenances fill the gaps.
    public func setPriority(of type: HealthType, _ order: [Provenance]) async throws {
        try await setPriority(of: type, SourcePriority(order: order))
    }

    /// The priority the merge uses for `type`: its own, else the default, else ``SourcePriority/none``.
    public func effectivePriority(of type: HealthType) async throws -> SourcePriority {
        let stored = try await priorities()
        return stored[type.identifier] ?? stored[defaultPriorityKey] ?? .none
    }
}

/// One page of a sample query.
public struct SamplePage: Hashable, Sendable {
    public var samples: [QuantitySample]
    /// Pass as ``SampleQuery/cursor`` to get the next page; `nil` when this was the last.
    public var next: SampleCursor?

    public init(samples: [QuantitySample], next: SampleCursor?) {
        self.samples = samples
        self.next = next
    }
}

/// One page of a heartbeat series query.
public struct HeartbeatSeriesPage: Hashable, Sendable {
    public var series: [HeartbeatSeriesSample]
    /// Pass as ``SampleQuery/cursor`` to get the next page; `nil` when this was the last.
    public var next: SampleCursor?

    public init(series: [HeartbeatSeriesSample], next: SampleCursor?) {
        self.series = series
        self.next = next
    }
}

/// A statistics query: one type, buckets, filters and merge options.
public struct StatisticsQuery: Hashable, Sendable {
    public var type: HealthType
    /// The bucket borders (from ``StatisticsBuckets``, or explicit instants); a single statistic over a range
    /// is the two borders `[from, to]`.
    public var buckets: [StatisticsBucket]
    public var sources: [String]?
    public var devices: [String]?
    public var subjects: [String]?
    /// Unmerged per-provenance results (HealthKit's `separateBySource`).
    public var separateBySource: Bool
    /// Overrides the stored priority of the type for this query.
    public var priority: [Provenance]?
    /// What happens to provenances missing from the list; `nil`: the stored policy (with ``priority``: `gapFill`).
    public var unranked: CumulativeMerge.UnrankedPolicy?
    /// How long an instant of a discrete type holds its value for the time-weighted average (item 15).
    public var maxHoldMilliseconds: Int64
    /// Engines answer long ranges of discrete types (two days or more, in buckets aligned to 15 minutes)
    /// from rollups: count, avg, min, max and recent are the same, the time-weighted average is left out.
    /// SQLite answers cumulative types in buckets aligned to 15 minutes from rollups where they give the merge's
    /// exact answer (`docs/store-semantics.md`, item 13). `exact` makes them sweep the raw samples instead.
    public var exact: Bool

    public init(
        type: HealthType, buckets: [StatisticsBucket], sources: [String]? = nil, devices: [String]? = nil,
        subjects: [String]? = nil, separateBySource: Bool = false, priority: [Provenance]? = nil,
        unranked: CumulativeMerge.UnrankedPolicy? = nil, maxHoldMilliseconds: Int64 = 5_000, exact: Bool = false
    ) {
        self.type = type
        self.buckets = buckets
        self.sources = sources
        self.devices = devices
        self.subjects = subjects
        self.separateBySource = separateBySource
        self.priority = priority
        self.unranked = unranked
        self.maxHoldMilliseconds = maxHoldMilliseconds
        self.exact = exact
    }
}

/// The statistics of one bucket (for one provenance when the query separates by source).
public struct StatisticsResult: Hashable, Sendable {
    public var bucket: StatisticsBucket
    /// Set when the query separates by source.
    public var provenance: Provenance?
    /// Cumulative types: the merged (or per-provenance) sum; `nil` when nothing was measured.
    public var sum: Double?
    /// Cumulative types: the provenances that contributed.
    public var sources: [Provenance]
    /// Discrete types.
    public var discrete: DiscreteStatistics.Bucket?
    /// Category types: time and count per value that occurs in the bucket (``CategoryStatistics``).
    public var categories: [CategoryStatistics.Value]

    public init(
        bucket: StatisticsBucket, provenance: Provenance? = nil, sum: Double? = nil, sources: [Provenance] = [],
        discrete: DiscreteStatistics.Bucket? = nil, categories: [CategoryStatistics.Value] = []
    ) {
        self.bucket = bucket
        self.provenance = provenance
        self.sum = sum
        self.sources = sources
        self.discrete = discrete
        self.categories = categories
    }
}

/// What changed since an anchor.
public struct ChangeSet: Hashable, Sendable {
    public var added: [QuantitySample]
    /// New heartbeat series, when the changes are of `heartbeatSeries` (``added`` is then empty).
    public var heartbeatSeries: [HeartbeatSeriesSample]
    /// New correlations, when the changes are of `bloodPressure` or `food`.
    public var correlations: [Correlation] = []
    /// New workouts, when the changes are of `workout`.
    public var workouts: [Workout] = []
    /// Ids of deleted (or replaced) samples.
    public var deleted: [UUID]
    /// Pass back as the next anchor.
    public var anchor: Int64
    /// More changes remain after `anchor`.
    public var hasMore: Bool

    public init(
        added: [QuantitySample], heartbeatSeries: [HeartbeatSeriesSample] = [], deleted: [UUID], anchor: Int64,
        hasMore: Bool
    ) {
        self.added = added
        self.heartbeatSeries = heartbeatSeries
        self.deleted = deleted
        self.anchor = anchor
        self.hasMore = hasMore
    }
}
