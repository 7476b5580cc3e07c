import DBus
import Foundation
import Health
import HealthBus
import SQLiteStore
import Support
import Synchronization
import Testing
import WearhouseClient

/// What an app can get out of the API beyond its grants, and what a call may cost: existence oracles, ids
/// landing on other sources' samples, anchors, unbounded lists (issue 15).
@Suite(.serialized) struct BoundaryTests {
    static let noon: Int64 = 1_735_732_800_000  // 2025-01-01T12:00:00Z
    static let limitExceeded = HealthBusError.Name.limitExceeded

    @Test func listsOverTheirLimitsAreRefusedBeforeAnyWork() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            let bus = client.connection
            let types = DBusValue.strings(Array(repeating: "heartRate", count: HealthBusAPI.maximumTypesPerCall + 1))
            #expect(await rawCallError(bus, "Observe", [types]) == Self.limitExceeded)
            #expect(await rawCallError(bus, "StopObserving", [types]) == Self.limitExceeded)
            #expect(await rawCallError(bus, "RequestAuthorization", [types, .strings([])]) == Self.limitExceeded)
            #expect(await rawCallError(bus, "RequestAuthorization", [.strings([]), types]) == Self.limitExceeded)
            let values = DBusValue.strings((0...HealthBusAPI.maximumFilterValues).map { "s\($0)" })
            let long = DBusValue.strings([String(repeating: "s", count: HealthBusAPI.maximumStringLength + 1)])
            let none = DBusValue.vardict([:])
            for key in ["sources", "devices", "subjects"] {
                for list in [values, long] {
                    let options = DBusValue.vardict([key: list])
                    #expect(
                        await rawCallError(bus, "QuerySamples", [.string("heartRate"), options]) == Self.limitExceeded)
                    #expect(
                        await rawCallError(bus, "Statistics", [.string("heartRate"), .int64(0), .int64(10), options])
                            == Self.limitExceeded)
                    #expect(
                        await rawCallError(
                            bus, "StatisticsCollection",
                            [.string("heartRate"), .int64(0), .int64(10), .string("1h"), options])
                            == Self.limitExceeded)
                }
            }
            var many: [String: DBusValue] = [:]
            for index in 0...HealthBusAPI.maximumMetadataEntries { many["key\(index)"] = .string("v") }
            #expect(
                await rawCallError(bus, "QuerySamples", [.string("heartRate"), .vardict(["metadata": .vardict(many)])])
                    == Self.limitExceeded)
            let sample = DBusValue.struct([
                .string("heartRate"), .int64(Self.noon), .int64(Self.noon), .double(60), .string("count/min"),
                .vardict(["metadata": .vardict(many)]),
            ])
            #expect(
                await rawCallError(bus, "SaveSamples", [.array(HealthBusAPI.sampleType, [sample])])
                    == Self.limitExceeded)
            #expect(
                await rawCallError(bus, "DeleteSamples", [.strings([String(repeating: "0", count: 100_000)])])
                    == HealthBusError.Name.invalidArgument)
            // None of it reached the store.
            #expect(try await api.store.accessLog(limit: 10).filter { $0.caller == .app(app) }.isEmpty)
            #expect(api.server.observerCount == 0)

            // At the limits, they work; a type given many times is observed (and logged) once.
            let most = DBusValue.strings((0..<HealthBusAPI.maximumFilterValues).map { "s\($0)" })
            #expect(
                await rawCallError(bus, "QuerySamples", [.string("heartRate"), .vardict(["sources": most])]) == nil)
            let repeated = Array(repeating: "heartRate", count: HealthBusAPI.maximumTypesPerCall)
            #expect(await rawCallError(bus, "Observe", [.strings(repeated)]) == nil)
            #expect(await rawCallError(bus, "QuerySamples", [.string("heartRate"), none]) == nil)
            let log = try await api.store.accessLog(limit: 10).filter { $0.caller == .app(app) }
            #expect(log.map(\.operation) == [.query, .observe, .query])
        }
    }

    @Test func aFailingStoreShowsNoSQLToTheCallerNorALongLineInTheLog() async throws {
        let lines = LogLines()
        try await withAPI(log: lines.log, wrap: { FailingQueryStore(base: $0) }) { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            do {
                _ = try await client.samples(SampleQuery(type: .heartRate))
                Issue.record("the failing query succeeded")
            } catch let error as HealthBusError {
                #expect(error.name == HealthBusError.Name.failed)
                #expect(!error.message.contains("SELECT"))
                #expect(error.message.count < 500)
            }
            let logged = lines.all
            #expect(!logged.isEmpty)
            #expect(logged.allSatisfy { !$0.contains("SELECT") && $0.utf8.count <= 4_096 })
        }
    }

    @Test func anInvertedSampleIsAnInvalidSample() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            try await api.store.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: false, share: true)])
            let inverted = DBusValue.struct([
                .string("heartRate"), .int64(Self.noon), .int64(Self.noon - 1), .double(60), .string("count/min"),
                .vardict([:]),
            ])
            #expect(
                await rawCallError(client.connection, "SaveSamples", [.array(HealthBusAPI.sampleType, [inverted])])
                    == HealthBusError.Name.invalidSample)
        }
    }

    @Test func metadataIntegersComeBackAsIntegers() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            try await api.store.setAuthorization(
                app: app, [TypeAuthorization(type: "heartRate", read: true, share: true)])
            let metadata = DBusValue.vardict([
                "count": .int64(5), "small": .int32(-3), "ratio": .double(0.5), "whole": .double(2),
            ])
            let sample = DBusValue.struct([
                .string("heartRate"), .int64(Self.noon), .int64(Self.noon), .double(60), .string(""),
                .vardict(["metadata": metadata]),
            ])
            #expect(
                await rawCallError(client.connection, "SaveSamples", [.array(HealthBusAPI.sampleType, [sample])])
                    == nil)
            func query(_ options: [String: DBusValue]) async throws -> [DBusValue] {
                let reply = try await client.connection.call(
                    HealthBusAPI.busName, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName,
                    member: "QuerySamples", arguments: [.string("heartRate"), .vardict(options)])
                return reply.first?.arrayElements ?? []
            }
            let stored = try await query([:]).first?.structMembers?.last?.stringKeyedValue?["metadata"]?
                .stringKeyedValue
            #expect(stored?["count"]?.unwrapped == .int64(5))
            #expect(stored?["small"]?.unwrapped == .int64(-3))
            #expect(stored?["ratio"]?.unwrapped == .double(0.5))
            #expect(stored?["whole"]?.unwrapped == .double(2))
            #expect(try await query(["metadata": .vardict(["count": .int64(5)])]).count == 1)
        }
    }

    /// Saves one heart-rate sample at `milliseconds` under `id` and returns the error (name and message), or
    /// `nil` when it was saved.
    static func save(_ client: HealthClient, id: UUID, at milliseconds: Int64) async -> [String]? {
        let sample = DBusValue.struct([
            .string("heartRate"), .int64(milliseconds), .int64(milliseconds), .double(61), .string("count/min"),
            .vardict(["id": .string(id.uuidString.lowercased())]),
        ])
        do {
            _ = try await client.connection.call(
                HealthBusAPI.busName, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName,
                member: "SaveSamples", arguments: [.array(HealthBusAPI.sampleType, [sample])], timeout: .seconds(10))
            return nil
        } catch {
            return [error.name ?? "", error.message]
        }
    }

    @Test func anAppCannotTellOtherSourcesSamplesFromNoneByTheirIds() async throws {
        try await withAPI { api in
            try await api.gatewayHeartRate(count: 1, from: Self.noon)  // chunked, source org.wearhouse.gateway
            let prober = try await api.client()
            let other = try await api.client()
            defer {
                Task {
                    await prober.close()
                    await other.close()
                }
            }
            let proberApp = try await api.identify(prober)
            let otherApp = try await api.identify(other)
            for app in [proberApp, otherApp] {
                try await api.store.setAuthorization(
                    app: app, [TypeAuthorization(type: "heartRate", read: false, share: true)])
            }
            #expect(try await other.save([heartRate(Self.noon + 1_000, 70)]) == [.inserted])
            func derived(_ source: String, _ milliseconds: Int64) -> UUID {
                QuantitySample.derivedID(
                    type: "heartRate", source: source, device: nil, start: Instant(milliseconds: milliseconds),
                    end: Instant(milliseconds: milliseconds))
            }
            let gateway = APIHarness.gateway.identifier
            // Ids of samples that exist (the gateway's, the other app's), at their times and elsewhere, ids of
            // samples that do not, and an id of no sample at all: one answer.
            let answers = [
                await Self.save(prober, id: derived(gateway, Self.noon), at: Self.noon),
                await Self.save(prober, id: derived(gateway, Self.noon), at: Self.noon + 9_000),
                await Self.save(prober, id: derived(gateway, Self.noon + 5_000), at: Self.noon + 5_000),
                await Self.save(prober, id: derived(otherApp, Self.noon + 1_000), at: Self.noon + 1_000),
                await Self.save(prober, id: derived(otherApp, Self.noon + 1_000), at: Self.noon + 7_000),
                await Self.save(prober, id: derived(otherApp, Self.noon + 2_000), at: Self.noon + 2_000),
                await Self.save(prober, id: UUID(), at: Self.noon + 3_000),
            ]
            #expect(answers.allSatisfy { $0 == answers[0] })
            #expect(answers[0]?.first == HealthBusError.Name.invalidSample)
            // The app's own id (the one the store derives) is the same as none.
            #expect(await Self.save(prober, id: derived(proberApp, Self.noon + 4_000), at: Self.noon + 4_000) == nil)

            // Each id names one sample, and the gateway's later samples are stored under theirs.
            try await api.gatewayHeartRate(count: 6, from: Self.noon)
            let stored = try await api.store.samples(SampleQuery(type: .heartRate), as: .owner).samples
            #expect(stored.count == 8)
            #expect(Set(stored.map(\.id)).count == stored.count)
        }
    }

    @Test func aStoreRefusesDerivedLookingIdsThatAreNotTheSamplesOwn() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-ids-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let gateway = APIHarness.gateway
        let at = Instant(milliseconds: Self.noon)
        let squatted = QuantitySample.derivedID(
            type: "heartRate", source: gateway.identifier, device: nil, start: at, end: at)
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "heartRate", read: false, share: true)])
        // An app's sample (or the owner's) under the id the gateway's measurement derives: refused.
        for caller in [Caller.app("app"), .owner] {
            let squatter = QuantitySample(
                id: squatted, type: .heartRate, start: at, end: at, value: 99, source: Source(identifier: "app"))
            await #expect(throws: InvalidSampleError.self) { _ = try await store.save([squatter], as: caller) }
        }
        // A derived id with a client id is not the sample's own either.
        let versioned = QuantitySample(
            id: QuantitySample.derivedID(type: "heartRate", source: "app", device: nil, start: at, end: at),
            type: .heartRate, start: at, end: at, value: 99, source: Source(identifier: "app"),
            metadata: [MetadataKey.externalUUID: .string("x")])
        await #expect(throws: InvalidSampleError.self) { _ = try await store.save([versioned], as: .app("app")) }
        // The gateway's measurement is stored under its id, and that id names it alone.
        let measured = QuantitySample(type: .heartRate, start: at, end: at, value: 60, source: gateway)
        #expect(try await store.save([measured], as: .owner) == [.inserted])
        let stored = try await store.samples(SampleQuery(type: .heartRate), as: .owner).samples
        #expect(stored.map(\.id) == [squatted])
        #expect(stored.map(\.value) == [60])
    }

    @Test func observeAnswersWithWhatTheCallerMaySee() async throws {
        try await withAPI { api in
            try await api.gatewayHeartRate(count: 3, from: Self.noon)
            let stranger = try await api.client()
            let reader = try await api.client()
            defer {
                Task {
                    await stranger.close()
                    await reader.close()
                }
            }
            _ = try await api.identify(stranger)
            let readerApp = try await api.identify(reader)
            try await api.store.setAuthorization(
                app: readerApp, [TypeAuthorization(type: "heartRate", read: true, share: false)])
            let heartRate = try await api.store.changes(of: .heartRate, since: 0, limit: 100, as: .owner).anchor
            // Steps the reader may not read, written after the heart rate.
            let steps = (0..<4).map { index in
                QuantitySample(
                    type: .stepCount, start: Instant(milliseconds: Self.noon + Int64(index) * 60_000),
                    end: Instant(milliseconds: Self.noon + Int64(index + 1) * 60_000), value: 80,
                    source: APIHarness.gateway)
            }
            _ = try await api.store.save(steps, as: .owner)
            #expect(try await stranger.observe([.heartRate, .stepCount]).anchor == 0)
            #expect(try await reader.observe([.heartRate]).anchor == heartRate)
            #expect(try await reader.observe([.heartRate, .stepCount]).anchor == heartRate)
        }
    }
}

/// Log lines written to memory.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    var log: ServiceLog {
        ServiceLog(
            level: .info,
            destination: LogDestination { [self] entry in lines.withLock { $0.append(entry.terminalLine) } })
    }

    var all: [String] { lines.withLock { $0 } }
}

/// A store whose sample queries fail as SQLite fails on a statement with too many variables, SQL text and all.
struct FailingQueryStore: HealthStore {
    let base: SQLiteHealthStore

    func samples(_ query: SampleQuery, as caller: Caller) async throws -> SamplePage {
        throw SQLiteError(
            code: 1, operation: "prepare", message: "variable number must be between ?1 and ?250000",
            sql: "SELECT uuid FROM samples WHERE source IN (" + String(repeating: "?, ", count: 100_000) + "?)")
    }

    func save(_ samples: [QuantitySample], as caller: Caller) async throws -> [WriteOutcome] {
        try await base.save(samples, as: caller)
    }
    func characteristics(of subject: String?, as caller: Caller) async throws -> Characteristics {
        try await base.characteristics(of: subject, as: caller)
    }
    func setCharacteristic(
        _ type: HealthType, to value: Characteristics.Value?, of subject: String?, as caller: Caller
    ) async throws {
        try await base.setCharacteristic(type, to: value, of: subject, as: caller)
    }
    func save(_ series: [HeartbeatSeriesSample], as caller: Caller) async throws -> [WriteOutcome] {
        try await base.save(series, as: caller)
    }
    func save(_ batch: SampleBatch, as caller: Caller) async throws -> [WriteOutcome] {
        try await base.save(batch, as: caller)
    }
    func heartbeatSeries(_ query: SampleQuery, as caller: Caller) async throws -> HeartbeatSeriesPage {
        try await base.heartbeatSeries(query, as: caller)
    }
    func statistics(_ query: StatisticsQuery, as caller: Caller) async throws -> [StatisticsResult] {
        try await base.statistics(query, as: caller)
    }
    func delete(_ ids: [UUID], as caller: Caller) async throws -> Int { try await base.delete(ids, as: caller) }
    func changes(of type: HealthType, since anchor: Int64?, limit: Int, as caller: Caller) async throws -> ChangeSet {
        try await base.changes(of: type, since: anchor, limit: limit, as: caller)
    }
    func latestAnchor(of types: [HealthType], as caller: Caller) async throws -> Int64 {
        try await base.latestAnchor(of: types, as: caller)
    }
    func setAuthorization(app: String, _ grants: [TypeAuthorization]) async throws {
        try await base.setAuthorization(app: app, grants)
    }
    func apps() async throws -> [AppAuthorization] { try await base.apps() }
    func requestAuthorization(app: String, read: [String], share: [String]) async throws -> Bool {
        try await base.requestAuthorization(app: app, read: read, share: share)
    }
    func recordAccess(_ caller: Caller, _ operation: AccessLogEntry.Operation, type: String?) async throws {
        try await base.recordAccess(caller, operation, type: type)
    }
    func typesWithNewSamples(since anchor: Int64?) async throws -> (types: Set<String>, anchor: Int64) {
        try await base.typesWithNewSamples(since: anchor)
    }
    func accessLog(limit: Int) async throws -> [AccessLogEntry] { try await base.accessLog(limit: limit) }
    func setPriority(of type: HealthType?, _ priority: SourcePriority?) async throws {
        try await base.setPriority(of: type, priority)
    }
    func priorities() async throws -> [String: SourcePriority] { try await base.priorities() }
    func sources(of type: HealthType, as caller: Caller) async throws -> [SourceSummary] {
        try await base.sources(of: type, as: caller)
    }
    func save(_ correlations: [Correlation], as caller: Caller) async throws -> [WriteOutcome] {
        try await base.save(correlations, as: caller)
    }
    func correlations(_ query: SampleQuery, as caller: Caller) async throws -> CorrelationPage {
        try await base.correlations(query, as: caller)
    }
    func save(_ workouts: [Workout], as caller: Caller) async throws -> [WriteOutcome] {
        try await base.save(workouts, as: caller)
    }
    func workouts(_ query: SampleQuery, as caller: Caller) async throws -> WorkoutPage {
        try await base.workouts(query, as: caller)
    }
    func add(_ sampleIDs: [UUID], to workout: UUID, as caller: Caller) async throws -> Int {
        try await base.add(sampleIDs, to: workout, as: caller)
    }
    func workoutSampleIDs(_ workout: UUID, as caller: Caller) async throws -> [String: [UUID]] {
        try await base.workoutSampleIDs(workout, as: caller)
    }
}
