import DBus
import Foundation
import Health
import HealthBus
import SQLiteStore
import Testing
import WearhouseClient

/// Correlations and workouts over a private bus (issue 16, items 4 and 5): grants on the member types, what a
/// reader without them sees, a workout with its samples, and the limits.
@Suite(.serialized) struct CorrelationWorkoutAPITests {
    static let morning: Int64 = 1_735_718_400_000  // 2025-01-01T08:00:00Z

    static func at(_ minutes: Int64) -> Instant { Instant(milliseconds: morning + minutes * 60_000) }

    @Test func bloodPressureNeedsBothMemberGrantsAndReadsWhole() async throws {
        try await withAPI { api in
            let cuff = try await api.client()
            let reader = try await api.client()
            defer {
                Task {
                    await cuff.close()
                    await reader.close()
                }
            }
            let cuffApp = try await api.identify(cuff)
            let readerApp = try await api.identify(reader)
            let me = Source(identifier: cuffApp)
            let reading = Correlation.bloodPressure(
                systolic: 121, diastolic: 79, at: Self.at(0), source: me, metadata: ["arm": .string("left")])
            // Write permission on one member type is not enough, and nothing is written.
            try await api.store.setAuthorization(
                app: cuffApp, [TypeAuthorization(type: "bloodPressureSystolic", read: false, share: true)])
            let refused = await errorName { _ = try await cuff.save(reading) }
            #expect(refused == HealthBusError.Name.notAuthorized)
            #expect(
                try await api.store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.isEmpty)
            try await api.store.setAuthorization(
                app: cuffApp,
                [
                    TypeAuthorization(type: "bloodPressureSystolic", read: false, share: true),
                    TypeAuthorization(type: "bloodPressureDiastolic", read: false, share: true),
                ])
            #expect(try await cuff.save(reading) == .inserted)
            #expect(try await cuff.save(reading) == .duplicate)
            let own = try await cuff.correlations(SampleQuery(type: .bloodPressure)).correlations
            #expect(own.count == 1)
            #expect(own.first?.objects(for: .bloodPressureSystolic).first?.value == 121)
            #expect(own.first?.objects(for: .bloodPressureDiastolic).first?.value == 79)
            #expect(own.first?.metadata["arm"] == .string("left"))
            // A reader without read grants on both members sees nothing, exactly as when there is nothing.
            try await api.store.setAuthorization(
                app: readerApp, [TypeAuthorization(type: "bloodPressureSystolic", read: true, share: false)])
            #expect(try await reader.correlations(SampleQuery(type: .bloodPressure)).correlations.isEmpty)
            try await api.store.setAuthorization(
                app: readerApp,
                [
                    TypeAuthorization(type: "bloodPressureSystolic", read: true, share: false),
                    TypeAuthorization(type: "bloodPressureDiastolic", read: true, share: false),
                ])
            let seen = try await reader.correlations(SampleQuery(type: .bloodPressure)).correlations
            #expect(seen.map(\.id) == own.map(\.id))
            #expect(seen.first?.objects.count == 2)
            let changes = try await reader.changes(of: .bloodPressure, since: 0)
            #expect(changes.added.count == 1)
            // The reader cannot delete it; the cuff app deletes it with its members.
            #expect(try await reader.delete(own.map(\.id)) == 0)
            #expect(try await cuff.delete(own.map(\.id)) == 3)
            #expect(try await reader.correlations(SampleQuery(type: .bloodPressure)).correlations.isEmpty)
            // Every call is in the access log, the refused save as denied.
            let log = try await api.store.accessLog(limit: 100)
            #expect(log.contains { $0.operation == .save && $0.type == "bloodPressureDiastolic" && $0.denied })
            #expect(log.contains { $0.operation == .save && $0.type == "bloodPressure" && !$0.denied })
        }
    }

    @Test func aWorkoutWithItsSamplesAndItsChanges() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            try await api.store.setAuthorization(
                app: app,
                [
                    TypeAuthorization(type: "workout", read: true, share: true),
                    TypeAuthorization(type: "heartRate", read: true, share: true),
                ])
            let me = Source(identifier: app)
            let run = Workout(
                activityType: .running, start: Self.at(0), end: Self.at(60), duration: 3_300,
                totalEnergyBurned: 612.5, totalDistance: 10_012, totalSwimmingStrokeCount: nil,
                totalFlightsClimbed: 4,
                events: [
                    WorkoutEvent(.pause, start: Self.at(20)), WorkoutEvent(.resume, start: Self.at(25)),
                    WorkoutEvent(.lap, start: Self.at(0), end: Self.at(10), metadata: ["lap": .integer(1)]),
                ], source: me, metadata: ["indoor": .bool(false)])
            #expect(try await client.save(run) == .inserted)
            let rates = (0..<3).map { index in
                QuantitySample(
                    type: .heartRate, start: Self.at(Int64(index) * 10), end: Self.at(Int64(index) * 10),
                    value: 130 + Double(index), source: me)
            }
            #expect(try await client.save(rates) == [.inserted, .inserted, .inserted])
            let stored = try await client.workouts()
            #expect(stored.workouts == [run])
            let read = try await client.samples(SampleQuery(type: .heartRate)).samples
            let ids = read.map(\.id)
            #expect(try await client.add(ids.prefix(2).map { $0 }, to: run.id) == 2)
            let during = try await client.samples(of: .heartRate, in: run).samples
            #expect(during.map(\.id) == Array(ids.prefix(2)))
            // An unknown sample id adds nothing and says which.
            let unknown = await errorName { _ = try await client.add([UUID()], to: run.id) }
            #expect(unknown == HealthBusError.Name.invalidSample)
            // Deleted, the workout comes in the changes as a deletion; its samples stay.
            let before = try await client.changes(of: .workout, since: 0)
            #expect(before.added.count == 1)
            #expect(try await client.delete([run.id]) == 1)
            let after = try await client.changes(of: .workout, since: before.anchor)
            #expect(after.deleted == [run.id])
            #expect(try await client.samples(SampleQuery(type: .heartRate)).samples.count == 3)
        }
    }

    @Test func wrongShapesAndOversizedListsAreRefused() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            try await api.store.setAuthorization(
                app: app,
                ["workout", "bloodPressureSystolic", "bloodPressureDiastolic"].map {
                    TypeAuthorization(type: $0, read: true, share: true)
                })
            func call(_ samples: [DBusValue]) async -> String? {
                await errorName {
                    _ = try await client.connection.call(
                        client.destination, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName,
                        member: "SaveSamples", arguments: [.array(HealthBusAPI.sampleType, samples)])
                }
            }
            func wire(_ type: String, _ properties: [(String, DBusValue)]) -> DBusValue {
                .struct([
                    .string(type), .int64(Self.morning), .int64(Self.morning + 3_600_000), .double(0), .string(""),
                    .vardict(ordered: properties),
                ])
            }
            let member = wire("bloodPressureSystolic", [])
            let many = DBusValue.array(HealthBusAPI.sampleType, Array(repeating: member, count: 300))
            let tooMany = await call([wire("bloodPressure", [("objects", many)])])
            #expect(tooMany?.contains(HealthBusError.Name.limitExceeded) == true)
            let levitating = await call([wire("workout", [("activityType", .string("levitating"))])])
            #expect(levitating?.contains(HealthBusError.Name.invalidSample) == true)
            let noActivity = await call([wire("workout", [])])
            #expect(noActivity?.contains(HealthBusError.Name.invalidArgument) == true)
            let notAWorkout = await call([wire("heartRate", [("activityType", .string("running"))])])
            #expect(notAWorkout?.contains(HealthBusError.Name.invalidArgument) == true)
            // A blood pressure with one member is InvalidSample, and nothing is written.
            let single = wire(
                "bloodPressure",
                [
                    (
                        "objects",
                        .array(
                            HealthBusAPI.sampleType,
                            [
                                .struct([
                                    .string("bloodPressureSystolic"), .int64(Self.morning),
                                    .int64(Self.morning + 3_600_000), .double(120), .string("mmHg"), .vardict([:]),
                                ])
                            ])
                    )
                ])
            let lone = await call([single])
            #expect(lone?.contains(HealthBusError.Name.invalidSample) == true)
            #expect(
                try await api.store.samples(SampleQuery(type: .bloodPressureSystolic), as: .owner).samples.isEmpty)
        }
    }
}
