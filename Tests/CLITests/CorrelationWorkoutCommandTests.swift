import Foundation
import Health
import SQLiteStore
import TestSupport
import Testing

/// Correlations and workouts through the real `wearhouse` binary: listed by `samples`, exported in every format
/// (blood pressure as one FHIR Observation), imported back into the same store, and deleted by id.
@Suite struct CorrelationWorkoutCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }
    var copy: String { directory.appendingPathComponent("copy.db").path }

    static let morning: Int64 = 1_743_325_200_000  // 2025-03-30T09:00:00Z
    static func at(_ minutes: Int64) -> Instant { Instant(milliseconds: morning + minutes * 60_000) }

    struct Filled {
        var pressure: Correlation
        var meal: Correlation
        var run: Workout
        var rates: [QuantitySample]
    }

    /// The run's route: a location every 1.25 s, some without altitude, the first without speed.
    static var routeLocations: [RouteLocation] {
        var locations: [RouteLocation] = []
        for index in 0..<50 {
            let time: Instant = at(60).adding(milliseconds: Int64(index) * 1_250)
            let latitude: Double = 51.5 + Double(index) * 1e-5
            let altitude: Double? = index % 3 == 0 ? nil : 12.25
            let speed: Double? = index == 0 ? nil : 2.8
            locations.append(
                RouteLocation(
                    time: time, latitude: latitude, longitude: -0.1, altitude: altitude, horizontalAccuracy: 4.5,
                    speed: speed, course: 90))
        }
        return locations
    }

    /// A blood pressure (with a device), a meal, a run with two of three heart rates associated.
    func fill() async throws -> Filled {
        let writer = try SQLiteHealthStore(path: store)
        let cuff = Source(identifier: "com.example.cuff", version: "2.1")
        let device = Device(name: "Cuff", manufacturer: "Omron", model: "M7", serialNumber: "S1")
        let pressure = Correlation.bloodPressure(
            systolic: 121, diastolic: 79, at: Self.at(0), startOffsetSeconds: 7_200, source: cuff, device: device,
            subject: "alice", metadata: ["arm": .string("left")])
        let meal = Correlation(
            type: .food, start: Self.at(30), end: Self.at(60),
            objects: [
                QuantitySample(
                    type: HealthTypeCatalog.type("dietaryEnergyConsumed")!, start: Self.at(30), end: Self.at(30),
                    value: 650, source: cuff),
                QuantitySample(
                    type: HealthTypeCatalog.type("dietaryProtein")!, start: Self.at(40), end: Self.at(40), value: 32,
                    source: cuff),
            ], source: cuff, metadata: ["foodType": .string("lentil soup")])
        #expect(try await writer.save([pressure, meal], as: .owner) == [.inserted, .inserted])
        let runner = Source(identifier: "com.example.run")
        let run = Workout(
            activityType: .running, start: Self.at(60), end: Self.at(120), duration: 3_300, totalEnergyBurned: 612.5,
            totalDistance: 10_012,
            events: [
                WorkoutEvent(.pause, start: Self.at(80)), WorkoutEvent(.resume, start: Self.at(85)),
                WorkoutEvent(.lap, start: Self.at(60), end: Self.at(70), metadata: ["lap": .integer(1)]),
            ],
            routes: [WorkoutRoute(locations: Self.routeLocations, metadata: ["syncVersion": .integer(2)])],
            source: runner, metadata: ["indoor": .bool(false)])
        #expect(try await writer.save([run], as: .owner) == [.inserted])
        let rates = (0..<3).map {
            QuantitySample(
                type: .heartRate, start: Self.at(60 + Int64($0) * 20), end: Self.at(60 + Int64($0) * 20),
                value: 140 + Double($0), source: runner)
        }
        _ = try await writer.save(rates, as: .owner)
        #expect(try await writer.add(rates.prefix(2).map(\.id), to: run.id, as: .owner) == 2)
        return Filled(pressure: pressure, meal: meal, run: run, rates: rates)
    }

    /// Everything a store holds of these kinds, comparable across stores.
    static func contents(_ store: SQLiteHealthStore) async throws -> (
        StoreContents, [Correlation], [Workout], [[String: [UUID]]]
    ) {
        let samples = try await StoreContents.of(store)
        var correlations: [Correlation] = []
        for type in [HealthType.bloodPressure, .food] {
            correlations += try await store.correlations(SampleQuery(type: type), as: .owner).correlations
        }
        correlations = correlations.map { correlation in
            var sorted = correlation
            sorted.objects.sort { $0.id.uuidString < $1.id.uuidString }
            return sorted
        }
        let workouts = try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts
        var associated: [[String: [UUID]]] = []
        for workout in workouts {
            associated.append(
                try await store.workoutSampleIDs(workout.id, as: .owner).mapValues {
                    $0.sorted { $0.uuidString < $1.uuidString }
                })
        }
        return (samples, correlations, workouts, associated)
    }

    @Test func exportThenImportGivesTheSameStoreCorrelationsAndWorkoutsIncluded() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try await fill()
        let export = try WearhouseRunner.run(["export", "--store", store, "--format", "ndjson"])
        #expect(export.status == 0, "\(export.stderr)")
        // Two correlations (their four members inside them), one workout, three heart rates.
        let lines = export.stdout.split(separator: "\n")
        #expect(lines.count == 6)
        let imported = try WearhouseRunner.run(["import-samples", "--store", copy, "-"], stdin: export.stdout)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "6 samples: 6 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n")
        let original = try await Self.contents(try SQLiteHealthStore(path: store))
        let copied = try await Self.contents(try SQLiteHealthStore(path: copy))
        #expect(original.0.quantities.count == 7)
        #expect(copied.0 == original.0)
        #expect(copied.1 == original.1)
        #expect(copied.2 == original.2)
        #expect(copied.3 == original.3)
        #expect(copied.3.first?["heartRate"]?.count == 2)
        #expect(copied.2.first?.routes.first?.locations.count == 50)
        // Importing the export again stores nothing new.
        let again = try WearhouseRunner.run(["import-samples", "--store", copy, "-"], stdin: export.stdout)
        #expect(again.stdout == "6 samples: 0 inserted, 6 duplicate, 0 conflict, 0 replaced, 0 stale\n")
        // samples --format json of each kind reads back too.
        var json = ""
        for type in ["bloodPressure", "food", "workout", "heartRate"] {
            json += try WearhouseRunner.run(["samples", "--store", store, "--type", type, "--format", "json"]).stdout
        }
        let third = directory.appendingPathComponent("third.db").path
        let fromJSON = try WearhouseRunner.run(["import-samples", "--store", third, "-"], stdin: json)
        #expect(fromJSON.status == 0, "\(fromJSON.stderr)")
        let thirdContents = try await Self.contents(try SQLiteHealthStore(path: third))
        #expect(thirdContents.1 == original.1)
        #expect(thirdContents.2 == original.2)
        #expect(thirdContents.3 == original.3)
    }

    /// `export --format gpx`: the routes as one GPX document, a track a route, each location with what it knows.
    @Test func gpxWritesEachRouteAsATrack() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try await fill()
        let out = directory.appendingPathComponent("routes.gpx").path
        let result = try WearhouseRunner.run(["export", "--store", store, "--format", "gpx", "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("exported 1 routes (50 locations) of 1 workouts to "), "\(result.stderr)")
        let gpx = try String(contentsOfFile: out, encoding: .utf8)
        #expect(gpx.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\""))
        #expect(gpx.hasSuffix("</trk>\n</gpx>\n"))
        #expect(gpx.components(separatedBy: "<trkpt ").count == 51)
        #expect(gpx.contains("<name>running 2025-03-30T10:00:00.000Z</name>"))
        // The second location: an altitude, a time to the millisecond, speed, course and horizontal accuracy.
        let second =
            "<trkpt lat=\"51.50001\" lon=\"-0.1\">\n   <ele>12.25</ele>\n   <time>2025-03-30T10:00:01.250Z</time>\n"
            + "   <extensions>\n    <speed>2.8</speed>\n    <course>90.0</course>\n    <hAcc>4.5</hAcc>\n   </extensions>"
        #expect(gpx.contains(second), "\(gpx.prefix(800))")
        // Only workouts have routes.
        let refused = try WearhouseRunner.run(["export", "--store", store, "--format", "gpx", "--type", "heartRate"])
        #expect(refused.status == 64)
    }

    @Test func fhirWritesBloodPressureAsOneObservationAndAWorkoutAsAnother() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let filled = try await fill()
        let fhir = try WearhouseRunner.run(["export", "--store", store, "--format", "fhir"])
        #expect(fhir.status == 0, "\(fhir.stderr)")
        let observations = try fhir.stdout.split(separator: "\n").map { try WearhouseRunner.json($0) }
        func codes(_ observation: [String: Any]) -> [String] {
            (((observation["code"] as? [String: Any])?["coding"] as? [[String: Any]]) ?? []).compactMap {
                $0["code"] as? String
            }
        }
        let pressures = observations.filter { codes($0) == ["85354-9"] }
        #expect(pressures.count == 1)
        // No systolic or diastolic Observation of its own: the members are the components.
        #expect(!observations.contains { codes($0) == ["8480-6"] || codes($0) == ["8462-4"] })
        let components = try #require(pressures.first?["component"] as? [[String: Any]])
        let byCode = Dictionary(
            uniqueKeysWithValues: components.map { component in
                (
                    codes(component).first ?? "",
                    component["valueQuantity"] as? [String: Any] ?? [:]
                )
            })
        #expect(byCode["8480-6"]?["value"] as? Double == 121)
        #expect(byCode["8462-4"]?["value"] as? Double == 79)
        #expect(byCode["8480-6"]?["code"] as? String == "mm[Hg]")
        #expect(byCode["8462-4"]?["system"] as? String == "http://unitsofmeasure.org")
        #expect(pressures.first?["id"] as? String == filled.pressure.id.uuidString.lowercased())
        #expect(pressures.first?["effectiveDateTime"] as? String == "2025-03-30T11:00:00.000+02:00")
        let workout = try #require(
            observations.first { ($0["valueCodeableConcept"] as? [String: Any])?["text"] as? String == "running" })
        let parts = try #require(workout["component"] as? [[String: Any]])
        #expect(
            parts.contains {
                codes($0) == ["55411-3"] && ($0["valueQuantity"] as? [String: Any])?["value"] as? Double == 55
            })
        #expect(parts.contains { codes($0) == ["41981-2"] })
        // The route: a GeoJSON LineString attached, its positions [longitude, latitude(, altitude)] and times.
        let extensions = try #require(workout["extension"] as? [[String: Any]])
        let route = try #require(extensions.first { $0["url"] as? String == "urn:wearhouse:workout-route" })
        let attachment = try #require(route["valueAttachment"] as? [String: Any])
        #expect(attachment["contentType"] as? String == "application/geo+json")
        let data = try #require(Data(base64Encoded: attachment["data"] as? String ?? ""))
        let feature = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let geometry = try #require(feature["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        let positions = try #require(geometry["coordinates"] as? [[Double]])
        #expect(positions.count == 50)
        #expect(positions[0] == [-0.1, 51.5])
        #expect(positions[1] == [-0.1, 51.50001, 12.25])
        let times = (feature["properties"] as? [String: Any])?["times"] as? [String]
        #expect(times?[1] == "2025-03-30T10:00:01.250Z")
        // CSV: the members' rows and the correlation's own, the workout's row with its fields.
        let csv = try WearhouseRunner.run([
            "export", "--store", store, "--format", "csv", "--type", "bloodPressure,workout",
        ])
        let rows = csv.stdout.split(separator: "\n")
        #expect(rows.count == 1 + 3 + 1)
        #expect(rows.contains { $0.contains(",bloodPressure,") && $0.contains(",2,count,") })
        #expect(rows.contains { $0.contains(",workout,") && $0.contains(",3300") && $0.contains("running") })
    }

    @Test func samplesListsTheKindsAndDeleteTakesTheirIds() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let filled = try await fill()
        let pressure = try WearhouseRunner.run(["samples", "--store", store, "--type", "bloodPressure"])
        #expect(pressure.status == 0, "\(pressure.stderr)")
        #expect(pressure.stdout.contains("121/79 mmHg"))
        let workouts = try WearhouseRunner.run(["samples", "--store", store, "--type", "workout"])
        #expect(workouts.stdout.contains("running 55 min, 10012 m, 612.5 kcal"))
        let deleted = try WearhouseRunner.run([
            "delete", "--store", store, "--id", filled.pressure.id.uuidString, "--yes",
        ])
        #expect(deleted.stdout == "deleted 3 samples\n", "\(deleted.stderr)")
        #expect(
            try WearhouseRunner.run(["samples", "--store", store, "--type", "bloodPressure"]).stdout == "No samples.\n")
        #expect(
            try WearhouseRunner.run(["samples", "--store", store, "--type", "bloodPressureSystolic"]).stdout
                == "No samples.\n")
        let run = try WearhouseRunner.run(["delete", "--store", store, "--id", filled.run.id.uuidString, "--yes"])
        #expect(run.stdout == "deleted 1 samples\n")
        let rates = try WearhouseRunner.run(["samples", "--store", store, "--type", "heartRate", "--format", "csv"])
        #expect(rates.stdout.split(separator: "\n").count == 1 + 3)
    }

    @Test func theREADMELinesOfEveryKindImport() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "```json\n{\"type\": \"bodyMass\""))
        let block = readme[start.lowerBound...].dropFirst("```json\n".count)
        let end = try #require(block.range(of: "```"))
        let lines = String(block[..<end.lowerBound])
        #expect(lines.split(separator: "\n").count == 4)
        let imported = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: lines)
        #expect(
            imported.stdout == "4 samples: 4 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n",
            "\(imported.stderr)")
        let again = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: lines)
        #expect(again.stdout == "4 samples: 0 inserted, 4 duplicate, 0 conflict, 0 replaced, 0 stale\n")
        let listed = try WearhouseRunner.run(["samples", "--store", store, "--type", "bloodPressure"])
        #expect(listed.stdout.contains("121/79 mmHg"))
    }
}
