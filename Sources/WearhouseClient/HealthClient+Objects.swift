import DBus
public import Foundation
public import Health
import HealthBus

/// Correlations and workouts (docs/app-api.md, "Correlations and workouts"): saved with `SaveSamples`, read with
/// `QuerySamples`, deleted with `DeleteSamples`, as any sample; samples join a workout with `AddWorkoutSamples`.
extension HealthClient {
    /// Saves correlations atomically, each with its members (the service makes this app their source). Needs
    /// write permission for every member type (both blood pressure types for `bloodPressure`).
    /// - Throws: ``HealthBusError`` `NotAuthorized`, or `InvalidSample` naming the correlation and member.
    public func save(_ correlations: [Correlation]) async throws -> [WriteOutcome] {
        try await save(correlations.map { SampleWire.encode($0, forSaving: true) })
    }

    /// Saves one correlation.
    public func save(_ correlation: Correlation) async throws -> WriteOutcome {
        try await save([correlation]).first ?? .rejected
    }

    /// Saves workouts atomically (write permission for `workout`).
    public func save(_ workouts: [Workout]) async throws -> [WriteOutcome] {
        try await save(workouts.map { SampleWire.encode($0, forSaving: true) })
    }

    /// Saves one workout.
    public func save(_ workout: Workout) async throws -> WriteOutcome {
        try await save([workout]).first ?? .rejected
    }

    /// One page of correlations.
    public struct CorrelationPage: Sendable {
        public var correlations: [Correlation]
        /// Pass to the next call to continue; `nil` after the last page.
        public var cursor: String?
    }

    /// The correlations of `query.type` (`bloodPressure` or `food`) with their members, one page at a time: those
    /// this app saved, and those whose member types it may all read.
    public func correlations(_ query: SampleQuery, cursor: String? = nil) async throws -> CorrelationPage {
        let page = try await samples(query, cursor: cursor)
        return CorrelationPage(
            correlations: page.samples.compactMap { if case .correlation(let found) = $0 { found } else { nil } },
            cursor: page.cursor)
    }

    /// One page of workouts.
    public struct WorkoutPage: Sendable {
        public var workouts: [Workout]
        /// Pass to the next call to continue; `nil` after the last page.
        public var cursor: String?
    }

    /// The workouts matching `query` (its type is replaced by `workout`) that this app may read.
    public func workouts(_ query: SampleQuery = SampleQuery(type: .workout), cursor: String? = nil) async throws
        -> WorkoutPage
    {
        var query = query
        query.type = .workout
        let page = try await samples(query, cursor: cursor)
        return WorkoutPage(
            workouts: page.samples.compactMap { if case .workout(let found) = $0 { found } else { nil } },
            cursor: page.cursor)
    }

    /// Associates stored samples with a workout this app saved; returns how many were newly associated. The
    /// samples are named by id: read them back from a query first (the service derives the ids of saved samples).
    public func add(_ samples: [QuantitySample], to workout: Workout) async throws -> Int {
        try await add(samples.map(\.id), to: workout.id)
    }

    /// Associates samples, by id, with workout `workout`.
    public func add(_ sampleIDs: [UUID], to workout: UUID) async throws -> Int {
        let reply = try await call(
            "AddWorkoutSamples",
            [.string(workout.uuidString.lowercased()), .strings(sampleIDs.map { $0.uuidString.lowercased() })])
        guard let count = reply.first?.uint32Value else { throw unexpected("AddWorkoutSamples") }
        return Int(count)
    }

    /// The samples of `type` associated with `workout`, one page at a time.
    public func samples(of type: HealthType, in workout: Workout, cursor: String? = nil) async throws -> Page {
        var query = SampleQuery(type: type)
        query.workout = workout.id
        return try await samples(query, cursor: cursor)
    }
}
