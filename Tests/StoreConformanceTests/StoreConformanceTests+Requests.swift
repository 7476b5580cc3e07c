import Foundation
import Health
import Testing

/// Permission requests and the observers' change feed.
extension StoreConformanceTests {
    @Test(arguments: Engine.allCases) func requestsStayPendingUntilTheOwnerDecides(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let app = "uid1000:/usr/bin/today"
        #expect(try await store.requestAuthorization(app: app, read: ["heartRate", "stepCount"], share: ["heartRate"]))
        var listed = try await store.apps()
        #expect(listed.map(\.app) == [app])
        #expect(listed.first?.pendingRead == ["heartRate", "stepCount"])
        #expect(listed.first?.pendingShare == ["heartRate"])
        #expect(listed.first?.grants == [])

        // The owner grants one read: the whole request is answered, the rest denied.
        try await store.setAuthorization(app: app, [TypeAuthorization(type: "heartRate", read: true, share: false)])
        listed = try await store.apps()
        #expect(listed.first?.pendingRead == [] && listed.first?.pendingShare == [])
        // Asking again for what was decided is not pending (the answer never says which way it went) ...
        #expect(
            try await store.requestAuthorization(app: app, read: ["heartRate", "stepCount"], share: ["heartRate"])
                == false)
        // ... but a new type is.
        #expect(try await store.requestAuthorization(app: app, read: ["activeEnergyBurned"], share: []))
        // Something granted before any request is not asked for.
        try await store.setAuthorization(
            app: "other", [TypeAuthorization(type: "stepCount", read: true, share: true)])
        #expect(try await store.requestAuthorization(app: "other", read: ["stepCount"], share: ["stepCount"]) == false)

        let log = try await store.accessLog(limit: 20)
        #expect(log.filter { $0.operation == .request && $0.caller == .app(app) }.count == 3)
    }

    @Test(arguments: Engine.allCases) func reportsWhichTypesGotNewSamples(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let (none, start) = try await store.typesWithNewSamples(since: nil)
        #expect(none.isEmpty)
        // A sensor's dense series (chunks in SQLite, rows in PostgreSQL) and an app's row.
        _ = try await store.save([heartRate(1, 70), heartRate(2, 71)], as: .owner)
        let (types, anchor) = try await store.typesWithNewSamples(since: start)
        #expect(types == ["heartRate"])
        #expect(anchor > start)
        #expect(try await store.typesWithNewSamples(since: anchor).types.isEmpty)
        try await store.setAuthorization(app: "app", [TypeAuthorization(type: "stepCount", read: false, share: true)])
        let steps = QuantitySample(
            type: .stepCount, start: Instant(seconds: 0), end: Instant(seconds: 60), value: 80,
            source: Source(identifier: "app"))
        _ = try await store.save([steps], as: .app("app"))
        _ = try await store.save([series(minute: 3)], as: .owner)
        let (later, _) = try await store.typesWithNewSamples(since: anchor)
        #expect(later == ["stepCount", "heartbeatSeries"])
        // Deleting adds nothing.
        let (_, afterWrites) = try await store.typesWithNewSamples(since: nil)
        _ = try await store.delete([steps.id], as: .app("app"))
        #expect(try await store.typesWithNewSamples(since: afterWrites).types.isEmpty)
    }
}
