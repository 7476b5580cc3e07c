import Foundation
import Health
import SQLiteStore
import Support
import TestSupport
import Testing

/// `import-samples` of an Apple Health export (docs/apple-health-import.md), through the real binary into real
/// SQLite files: a synthetic export in the real format (the DTD header, `<Me>`'s HKCharacteristic attributes, every
/// kind of element) round-trips type by type; importing it twice, or a superset, stores nothing twice; a kill
/// anywhere then a second run leaves exactly one copy; hostile inputs are refused without damage.
@Suite struct AppleHealthImportTests {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 13 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT ExportDate EMPTY>
        <!ATTLIST ExportDate
          value CDATA #REQUIRED
        >
        <!ELEMENT Me EMPTY>
        <!ATTLIST Me
          HKCharacteristicTypeIdentifierDateOfBirth         CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBiologicalSex       CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBloodType           CDATA #REQUIRED
          HKCharacteristicTypeIdentifierFitzpatrickSkinType CDATA #REQUIRED
          HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse CDATA #IMPLIED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
          sourceName    CDATA #REQUIRED
          sourceVersion CDATA #IMPLIED
          device        CDATA #IMPLIED
          creationDate  CDATA #IMPLIED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        <!ELEMENT MetadataEntry EMPTY>
        <!ATTLIST MetadataEntry
          key   CDATA #REQUIRED
          value CDATA #REQUIRED
        >
        ]>
        <HealthData locale="en_GB">
         <ExportDate value="2024-05-01 09:00:00 +0100"/>

        """

    static let watch =
        "&lt;&lt;HKDevice: 0x283ab7890&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, "
        + "hardware:Watch6,1, software:9.1&gt;"

    /// One heart rate a minute from 2024-04-01 08:00 +0100, `count` of them, from the watch.
    static func heartRates(_ count: Int, from first: Int = 0) -> String {
        (first..<first + count).map { index in
            let time = clock(minutes: index)
            return "  <Record type=\"HKQuantityTypeIdentifierHeartRate\" sourceName=\"Ann’s Apple Watch\" "
                + "sourceVersion=\"9.1\" device=\"\(watch)\" unit=\"count/min\" creationDate=\"\(time)\" "
                + "startDate=\"\(time)\" endDate=\"\(time)\" value=\"\(60 + index % 50)\">\n"
                + "   <MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"1\"/>\n  </Record>\n"
        }.joined()
    }

    /// `2024-04-01 08:00:00 +0100` plus `minutes` (less than 40,000: April holds them).
    static func clock(minutes: Int) -> String {
        let total = 8 * 60 + minutes
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "2024-04-\(two(1 + total / 1_440)) \(two(total / 60 % 24)):\(two(total % 60)):00 +0100"
    }

    /// Every kind of element the export holds, once or twice each.
    static let everyKind = """
          <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-06-15" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeABPositive" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeIII" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="HKCardioFitnessMedicationsUseBetaBlocker"/>
          <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Health" sourceVersion="17.4" unit="lb" creationDate="2024-04-02 07:30:00 +0100" startDate="2024-04-02 07:30:00 +0100" endDate="2024-04-02 07:30:00 +0100" value="150">
           <MetadataEntry key="HKWasUserEntered" value="1"/>
          </Record>
          <Record type="HKQuantityTypeIdentifierBodyTemperature" sourceName="Health" unit="degF" startDate="2024-04-02 07:31:00 +0100" endDate="2024-04-02 07:31:00 +0100" value="98.6"/>
          <Record type="HKQuantityTypeIdentifierBloodGlucose" sourceName="Health" unit="mmol&lt;180.1558800000541&gt;/L" startDate="2024-04-02 07:32:00 +0100" endDate="2024-04-02 07:32:00 +0100" value="5.5"/>
          <Record type="HKQuantityTypeIdentifierDistanceWalkingRunning" sourceName="Ann’s iPhone" sourceVersion="17.4" device="&lt;&lt;HKDevice: 0x2807b16d0&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,5, software:17.4&gt;" unit="km" startDate="2024-04-02 08:00:00 +0100" endDate="2024-04-02 08:10:00 +0100" value="1.25"/>
          <Record type="HKQuantityTypeIdentifierActiveEnergyBurned" sourceName="Ann’s iPhone" unit="kJ" startDate="2024-04-02 08:00:00 +0100" endDate="2024-04-02 08:10:00 +0100" value="418.4"/>
          <Record type="HKQuantityTypeIdentifierOxygenSaturation" sourceName="Ann’s Apple Watch" unit="%" startDate="2024-04-02 03:00:00 +0100" endDate="2024-04-02 03:00:00 +0100" value="0.97"/>
          <Record type="HKQuantityTypeIdentifierVO2Max" sourceName="Ann’s Apple Watch" unit="mL/min·kg" startDate="2024-04-02 09:00:00 +0100" endDate="2024-04-02 09:00:00 +0100" value="42.5"/>
          <Record type="HKQuantityTypeIdentifierHeight" sourceName="Health" unit="cm" startDate="2024-04-02 07:33:00 +0100" endDate="2024-04-02 07:33:00 +0100" value="170"/>
          <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Ann’s Apple Watch" startDate="2024-04-01 23:10:00 +0100" endDate="2024-04-02 01:40:00 +0100" value="HKCategoryValueSleepAnalysisAsleepCore">
           <MetadataEntry key="HKTimeZone" value="Europe/London"/>
          </Record>
          <Record type="HKCategoryTypeIdentifierAppleStandHour" sourceName="Ann’s Apple Watch" startDate="2024-04-02 10:00:00 +0100" endDate="2024-04-02 11:00:00 +0100" value="HKCategoryValueAppleStandHourStood"/>
          <Record type="HKQuantityTypeIdentifierWalkingSpeed" sourceName="Ann’s iPhone" unit="km/hr" startDate="2024-04-02 08:00:00 +0100" endDate="2024-04-02 08:00:10 +0100" value="4.8"/>
          <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Ann’s Apple Watch" device="\(watch)" unit="ms" startDate="2024-04-02 22:21:54 +0100" endDate="2024-04-02 22:22:54 +0100" value="48.5">
           <HeartRateVariabilityMetadataList>
            <InstantaneousBeatsPerMinute bpm="64" time="10:21:54.25 PM"/>
            <InstantaneousBeatsPerMinute bpm="60" time="10:21:55.25 PM"/>
            <InstantaneousBeatsPerMinute bpm="75" time="10:21:56.05 PM"/>
           </HeartRateVariabilityMetadataList>
          </Record>
          <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Omron" sourceVersion="2.1" creationDate="2024-04-03 07:00:00 +0100" startDate="2024-04-03 07:00:00 +0100" endDate="2024-04-03 07:00:00 +0100">
           <MetadataEntry key="HKMetadataKeyBodyPosition" value="sitting"/>
           <Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Omron" sourceVersion="2.1" unit="mmHg" startDate="2024-04-03 07:00:00 +0100" endDate="2024-04-03 07:00:00 +0100" value="78"/>
           <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Omron" sourceVersion="2.1" unit="mmHg" startDate="2024-04-03 07:00:00 +0100" endDate="2024-04-03 07:00:00 +0100" value="121"/>
          </Correlation>
          <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="MyFood" startDate="2024-04-03 12:00:00 +0100" endDate="2024-04-03 12:30:00 +0100">
           <Record type="HKQuantityTypeIdentifierDietaryEnergyConsumed" sourceName="MyFood" unit="Cal" startDate="2024-04-03 12:00:00 +0100" endDate="2024-04-03 12:30:00 +0100" value="640"/>
           <Record type="HKQuantityTypeIdentifierDietaryProtein" sourceName="MyFood" unit="g" startDate="2024-04-03 12:00:00 +0100" endDate="2024-04-03 12:30:00 +0100" value="31"/>
          </Correlation>
          <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="29.5" durationUnit="min" totalDistance="5.2" totalDistanceUnit="km" totalEnergyBurned="350" totalEnergyBurnedUnit="kcal" sourceName="Ann’s Apple Watch" sourceVersion="10.4" device="\(watch)" creationDate="2024-04-04 18:31:00 +0100" startDate="2024-04-04 18:00:00 +0100" endDate="2024-04-04 18:30:00 +0100">
           <MetadataEntry key="HKIndoorWorkout" value="0"/>
           <MetadataEntry key="HKAverageMETs" value="9.5 kcal/hr·kg"/>
           <WorkoutEvent type="HKWorkoutEventTypePause" date="2024-04-04 18:10:00 +0100" duration="0.5" durationUnit="min"/>
           <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2024-04-04 18:00:00 +0100" duration="30.0083" durationUnit="min"/>
           <WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" startDate="2024-04-04 18:00:00 +0100" endDate="2024-04-04 18:30:00 +0100" average="152" minimum="98" maximum="171" unit="count/min"/>
           <WorkoutRoute sourceName="Ann’s Apple Watch" sourceVersion="10.4" creationDate="2024-04-04 18:31:00 +0100" startDate="2024-04-04 18:00:00 +0100" endDate="2024-04-04 18:30:00 +0100">
            <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>
            <FileReference path="/workout-routes/route_2024-04-04_6.30pm.gpx"/>
           </WorkoutRoute>
          </Workout>
          <ActivitySummary dateComponents="2024-04-04" activeEnergyBurned="512" activeEnergyBurnedGoal="400" activeEnergyBurnedUnit="kcal" appleExerciseTime="35" appleExerciseTimeGoal="30" appleStandHours="11" appleStandHoursGoal="12"/>
          <ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="abc" sourceName="Clinic" fhirVersion="4.0.1" receivedDate="2024-04-01 10:00:00 +0100" resourceFilePath="/clinical-records/abc.json"/>
          <Audiogram type="HKDataTypeIdentifierAudiogram" sourceName="Mimi" startDate="2024-04-01 10:00:00 +0100" endDate="2024-04-01 10:00:00 +0100">
           <SensitivityPoint frequencyValue="1000" frequencyUnit="Hz" leftEarValue="10" leftEarUnit="dBHL"/>
          </Audiogram>

        """

    static let gpx = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1">
         <trk><name>Route 2024-04-04 6:30pm</name><trkseg>
          <trkpt lon="-0.1" lat="51.5"><ele>10</ele><time>2024-04-04T17:00:01Z</time><extensions><speed>2.75</speed><course>359.5</course><hAcc>4.2</hAcc><vAcc>3.1</vAcc></extensions></trkpt>
          <trkpt lon="-0.1001" lat="51.5001"><ele>
           10.5 </ele><time>2024-04-04T18:00:02.250+01:00</time><extensions><speed>-1</speed><course>-1</course></extensions></trkpt>
          <trkpt lon="-0.1002" lat="51.5002"><time>2024-04-04T17:00:03Z</time></trkpt>
         </trkseg></trk>
        </gpx>

        """

    /// A temporary folder, removed at the end.
    final class Folder {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-apple-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        func path(_ name: String) -> String { url.appendingPathComponent(name).path }

        /// `export.zip` holding `apple_health_export/export.xml` with `body`, a route, an ECG and a clinical record.
        func exportZip(_ body: String, name: String = "export.zip", gpx: String = AppleHealthImportTests.gpx) throws
            -> String
        {
            let root = url.appendingPathComponent("unpacked-\(name)/apple_health_export")
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("workout-routes"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("electrocardiograms"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("clinical-records"), withIntermediateDirectories: true)
            try (AppleHealthImportTests.header + body + "</HealthData>\n").write(
                to: root.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
            try gpx.write(
                to: root.appendingPathComponent("workout-routes/route_2024-04-04_6.30pm.gpx"), atomically: true,
                encoding: .utf8)
            try "Name,Ann\n".write(
                to: root.appendingPathComponent("electrocardiograms/ecg_2024-04-01.csv"), atomically: true,
                encoding: .utf8)
            try "{}".write(
                to: root.appendingPathComponent("clinical-records/abc.json"), atomically: true, encoding: .utf8)
            let zip = path(name)
            let made = try WearhouseRunner.runTool(
                "/usr/bin/env", ["python3", "-m", "zipfile", "-c", zip, root.path])
            #expect(made.status == 0, "\(made.stderr)")
            return zip
        }
    }

    static func store(_ path: String) throws -> SQLiteHealthStore { try SQLiteHealthStore(path: path) }

    static func samples(_ store: SQLiteHealthStore, _ type: HealthType) async throws -> [QuantitySample] {
        try await store.samples(SampleQuery(type: type, limit: 10_000), as: .owner).samples
    }

    @Test func aSyntheticExportRoundTripsTypeByType() async throws {
        let folder = try Folder()
        let zip = try folder.exportZip(Self.heartRates(3) + Self.everyKind)
        let path = folder.path("health.db")
        let result = try WearhouseRunner.run(["import-samples", "--store", path, zip])
        #expect(result.status == 0, "\(result.stderr)")
        // 3 heart rates, 8 quantities, 2 categories, 1 HRV, 1 series, 3 activity goals; 2 correlations (4 members,
        // counted once each as a correlation), 1 workout.
        #expect(result.stdout.hasPrefix("21 samples: 21 inserted, 0 duplicate"), "\(result.stdout)")
        for line in [
            "Record HKQuantityTypeIdentifierWalkingSpeed 1 (this type is not in the type catalog",
            "ClinicalRecord 1 (clinical records (FHIR) are not in the model", "Audiogram 1 (audiograms",
            "electrocardiograms/ files 1 (ECG voltage files are not in the model)",
            "clinical-records/ files 1 (", "Me HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse 1 (",
            "routes: 3 locations in 1 GPX files",
        ] {
            #expect(result.stdout.contains(line), "\(line) in \(result.stdout)")
        }
        let store = try Self.store(path)
        let watch = Device(
            name: "Apple Watch", manufacturer: "Apple Inc.", model: "Watch", hardwareVersion: "Watch6,1",
            softwareVersion: "9.1")

        let heartRates = try await Self.samples(store, .heartRate)
        #expect(heartRates.map(\.value) == [60, 61, 62])
        #expect(heartRates.first?.start == Instant(seconds: 1_711_954_800))
        #expect(heartRates.first?.startOffsetSeconds == 3_600)
        #expect(heartRates.first?.source == Source(identifier: "Ann’s Apple Watch", version: "9.1"))
        #expect(heartRates.first?.device == watch)
        #expect(heartRates.first?.metadata == ["heartRateMotionContext": .integer(1)])

        func one(_ identifier: String) async throws -> QuantitySample? {
            let found = try await Self.samples(store, try #require(HealthTypeCatalog.type(identifier)))
            #expect(found.count == 1, "\(identifier): \(found.count)")
            return found.first
        }
        let mass = try await one("bodyMass")
        #expect(abs((mass?.value ?? 0) - 150 * 0.45359237) < 1e-9)
        #expect(mass?.metadata == ["wasUserEntered": .bool(true)])
        #expect(mass?.source == Source(identifier: "Health", version: "17.4"))
        #expect(mass?.device == nil)
        #expect(abs((try await one("bodyTemperature")?.value ?? 0) - 37) < 1e-9)
        #expect(abs((try await one("bloodGlucose")?.value ?? 0) - 5.5 * 18.01558800000541) < 1e-6)
        let distance = try await one("distanceWalkingRunning")
        #expect(distance?.value == 1_250)
        #expect(distance?.end.milliseconds == (distance?.start.milliseconds ?? 0) + 600_000)
        #expect(distance?.device?.hardwareVersion == "iPhone14,5")
        #expect(abs((try await one("activeEnergyBurned")?.value ?? 0) - 100) < 1e-9)
        #expect(try await one("oxygenSaturation")?.value == 0.97)
        #expect(try await one("vo2Max")?.value == 42.5)
        #expect(abs((try await one("height")?.value ?? 0) - 1.7) < 1e-12)
        let sleep = try await one("sleepAnalysis")
        #expect(sleep?.value == 3)
        #expect(sleep?.metadata == ["timeZone": .string("Europe/London")])
        #expect(try await one("appleStandHour")?.value == 0)
        #expect(try await one("heartRateVariabilitySDNN")?.value == 48.5)

        let series = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries, limit: 10), as: .owner)
            .series
        #expect(series.count == 1)
        #expect(series.first?.beats.map(\.offsetMilliseconds) == [250, 1_250, 2_050])
        #expect(series.first?.beats.map(\.rrMilliseconds) == [937.5, 1_000, 800])
        #expect(series.first?.device == watch)

        let pressure = try await store.correlations(SampleQuery(type: .bloodPressure, limit: 10), as: .owner)
            .correlations
        #expect(pressure.count == 1)
        #expect(Set(pressure.first?.objects.map(\.value) ?? []) == [78, 121])
        #expect(pressure.first?.metadata == ["bodyPosition": .string("sitting")])
        #expect(pressure.first?.source == Source(identifier: "Omron", version: "2.1"))
        let food = try await store.correlations(
            SampleQuery(type: try #require(HealthTypeCatalog.type("food")), limit: 10), as: .owner
        ).correlations
        #expect(Set(food.first?.objects.map(\.value) ?? []) == [640, 31])

        let workouts = try await store.workouts(SampleQuery(type: .workout, limit: 10), as: .owner).workouts
        #expect(workouts.count == 1)
        let run = try #require(workouts.first)
        #expect(run.activityType == .running)
        #expect(run.duration == 1_770)
        #expect(abs((run.totalDistance ?? 0) - 5_200) < 1e-9)
        #expect(run.totalEnergyBurned == 350)
        #expect(run.events.map(\.kind) == [.pause, .segment])
        #expect(run.events.first.map { $0.end.milliseconds - $0.start.milliseconds } == 30_000)
        #expect(run.events.last?.end == run.end)
        #expect(run.metadata["indoorWorkout"] == .bool(false))
        #expect(run.metadata["averageMETs"] == .quantity(9.5, unit: "kcal/hr·kg"))
        #expect(run.metadata["heartRate.average"] == .quantity(152, unit: "count/min"))
        #expect(run.metadata["heartRate.maximum"] == .quantity(171, unit: "count/min"))
        // The route, kept with the workout: every location's numbers, "unknown" (-1) speed and course none, the
        // time's offset and fraction read, an absent altitude none.
        #expect(run.metadata["route"] == nil)
        #expect(run.routes.count == 1)
        #expect(run.routes.first?.metadata["syncVersion"] == .integer(2))
        #expect(
            run.routes.first?.locations == [
                RouteLocation(
                    time: Instant(seconds: 1_712_250_001), latitude: 51.5, longitude: -0.1, altitude: 10,
                    horizontalAccuracy: 4.2, verticalAccuracy: 3.1, speed: 2.75, course: 359.5),
                RouteLocation(
                    time: Instant(milliseconds: 1_712_250_002_250), latitude: 51.5001, longitude: -0.1001,
                    altitude: 10.5),
                RouteLocation(time: Instant(seconds: 1_712_250_003), latitude: 51.5002, longitude: -0.1002),
            ])
        #expect(run.device == watch)

        // The activity rings' goals: a sample each over 2024-04-04 at the export's offset, with the achieved value.
        let energyGoal = try await one("activeEnergyBurnedGoal")
        #expect(energyGoal?.value == 400)
        #expect(energyGoal?.start == Instant(seconds: 1_712_185_200))
        #expect(energyGoal?.end == Instant(seconds: 1_712_271_600))
        #expect(energyGoal?.startOffsetSeconds == 3_600)
        #expect(energyGoal?.metadata == ["achieved": .quantity(512, unit: "kcal")])
        #expect(try await one("appleExerciseTimeGoal")?.value == 30)
        #expect(try await one("appleStandHoursGoal")?.metadata == ["achieved": .quantity(11, unit: "count")])

        let me = try await store.characteristics(of: nil, as: .owner)
        #expect(me.biologicalSex == .female)
        #expect(me.bloodType == .abPositive)
        #expect(me.fitzpatrickSkinType == .typeIII)
        #expect(me.dateOfBirth?.description.hasPrefix("1985-06-15") == true)
    }

    /// A generated export (Tests/Support/AppleHealthExportGenerator.swift: 36 record types from ten sources, beats,
    /// correlations, workouts with routes, activity summaries, clinical records), zipped: the summary's counts per
    /// type are the generator's, the store holds them (by `store check`), and a second import stores nothing.
    @Test func aGeneratedExportImportsEveryTypeAsItsGeneratorCounts() throws {
        let folder = try Folder()
        let root = folder.url.appendingPathComponent("generated/apple_health_export")
        let written = try AppleHealthExportGenerator.write(days: 6, seed: 3, to: root)
        let zip = folder.path("generated.zip")
        let made = try WearhouseRunner.runTool("/usr/bin/env", ["python3", "-m", "zipfile", "-c", zip, root.path])
        #expect(made.status == 0, "\(made.stderr)")
        let store = folder.path("health.db")
        let result = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.hasPrefix("\(written.stored) samples: \(written.stored) inserted, 0 duplicate"),
            "\(result.stdout.prefix(300))")
        for (type, count) in written.read where !AppleHealthExportGenerator.Written.characteristics.contains(type) {
            let new = type == "workout" || type == "bloodPressure" || type == "food" ? "" : ", \(count) new"
            #expect(result.stdout.contains("  \(type): \(count) read\(new)"), "\(type) \(count) in \(result.stdout)")
        }
        for (type, count) in written.notInCatalog {
            #expect(
                result.stdout.contains(
                    "  Record \(type) \(count) (this type is not in the type catalog; first at line "),
                "\(type) in \(result.stdout)")
        }
        #expect(result.stdout.contains("  ClinicalRecord \(written.clinicalRecords) ("))
        #expect(
            result.stdout.contains("routes: \(written.routeLocations) locations in \(written.routeFiles) GPX files"))
        let counts = try Self.counts(store)
        for (type, count) in written.read where counts[type] != nil {
            #expect(counts[type] == count, "\(type)")
        }
        #expect(counts["heartRate"] == written.read["heartRate"])
        let again = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(
            again.stdout.hasPrefix("\(written.stored) samples: 0 inserted, \(written.stored) duplicate"),
            "\(again.stdout.prefix(300))")
    }

    /// The store's sample counts by type (`store check`), after checking its integrity.
    static func counts(_ store: String) throws -> [String: Int] {
        let check = try WearhouseRunner.run(["store", "check", "--store", store, "--json"])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        #expect(try WearhouseRunner.json(check.stdout)["integrity"] as? [String] == ["ok"])
        return try WearhouseRunner.json(check.stdout)["samples"] as? [String: Int] ?? [:]
    }

    /// Everything the store holds: samples, series, correlations and workouts.
    struct Everything: Equatable {
        var contents: StoreContents
        var correlations: [Correlation]
        var workouts: [Workout]
    }

    static func everything(_ path: String) async throws -> Everything {
        let store = try Self.store(path)
        let food = try #require(HealthTypeCatalog.type("food"))
        let pressure = try await store.correlations(SampleQuery(type: .bloodPressure, limit: 1_000), as: .owner)
        let meals = try await store.correlations(SampleQuery(type: food, limit: 1_000), as: .owner)
        return Everything(
            contents: try await StoreContents.of(store),
            correlations: pressure.correlations + meals.correlations,
            workouts: try await store.workouts(SampleQuery(type: .workout, limit: 1_000), as: .owner).workouts)
    }

    @Test func importingTwiceStoresNothingNewAndASupersetOnlyWhatIsNew() async throws {
        let folder = try Folder()
        let store = folder.path("health.db")
        let first = try folder.exportZip(Self.heartRates(3) + Self.everyKind, name: "first.zip")
        #expect(try WearhouseRunner.run(["import-samples", "--store", store, first]).status == 0)
        let once = try await Self.everything(store)
        let again = try WearhouseRunner.run(["import-samples", "--store", store, first])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasPrefix("21 samples: 0 inserted, 21 duplicate, 0 conflict"), "\(again.stdout)")
        #expect(try await Self.everything(store) == once)

        // A newer export: the same records, two more heart rates and a second workout.
        let later = Self.everyKind.replacingOccurrences(of: "2024-04-04 18:", with: "2024-04-05 18:")
        let superset = try folder.exportZip(
            Self.heartRates(5) + Self.everyKind
                + later.components(separatedBy: "<Workout ")[1]
                .components(separatedBy: "</Workout>")[0].prepending("<Workout ") + "</Workout>\n",
            name: "superset.zip")
        let grown = try WearhouseRunner.run(["import-samples", "--store", store, superset])
        #expect(grown.status == 0, "\(grown.stderr)")
        #expect(grown.stdout.hasPrefix("24 samples: 3 inserted, 21 duplicate, 0 conflict"), "\(grown.stdout)")
        let counts = try Self.counts(store)
        #expect(counts["heartRate"] == 5)
        #expect(counts["bodyMass"] == 1)
        let workouts = try await Self.store(store).workouts(SampleQuery(type: .workout, limit: 10), as: .owner)
        #expect(workouts.workouts.count == 2)
    }

    /// SIGKILL at four moments spread over an import of four batches and its correlations and workouts, into one
    /// store: after each kill the store is intact and holds all of the samples or none; a run to the end then
    /// leaves exactly one copy of everything, and one more run stores nothing.
    @Test func anImportKilledAnywhereAndRunAgainEndsWithExactlyOneCopy() async throws {
        let folder = try Folder()
        let store = folder.path("health.db")
        let count = 32_000
        let zip = try folder.exportZip(Self.heartRates(count) + Self.everyKind)

        // How long a whole import takes here (into a store of its own), to spread the kills over it.
        let clock = ContinuousClock()
        let started = clock.now
        let timing = try WearhouseRunner.run(["import-samples", "--store", folder.path("timing.db"), zip])
        #expect(timing.status == 0, "\(timing.stderr)")
        let whole = clock.now - started
        let microseconds = Double(whole.components.seconds) * 1e6 + Double(whole.components.attoseconds) * 1e-12
        for fraction in [0.2, 0.5, 0.8, 0.95] {
            let process = try WearhouseRunner.start(["import-samples", "--store", store, zip])
            usleep(UInt32(microseconds * fraction))
            process.signal(SIGKILL)
            process.wait()
            let stored = try Self.counts(store)["heartRate"] ?? 0
            #expect(stored == 0 || stored == count, "after a kill at \(fraction): \(stored) heart rates")
        }
        let finish = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(finish.status == 0, "\(finish.stderr)")
        let counts = try Self.counts(store)
        #expect(counts["heartRate"] == count)
        #expect(counts["bloodPressureSystolic"] == 1)
        #expect(counts["dietaryProtein"] == 1)
        #expect(try await Self.everything(store) == Self.everything(folder.path("timing.db")))
        let more = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(more.stdout.hasPrefix("\(count + 18) samples: 0 inserted, \(count + 18) duplicate"), "\(more.stdout)")
    }

    /// A blood pressure whose systolic member clashes with a record of the same type, source, start and end but
    /// another value: the store refuses that correlation, which the summary names, and keeps everything else.
    @Test func aCorrelationTheStoreRefusesIsNamedAndTheRestIsKept() throws {
        let folder = try Folder()
        let clash = """
              <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Omron" sourceVersion="2.1" unit="mmHg" startDate="2024-04-03 07:00:00 +0100" endDate="2024-04-03 07:00:00 +0100" value="130"/>

            """
        let zip = try folder.exportZip(clash + Self.everyKind)
        let store = folder.path("health.db")
        let result = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("18 samples: 18 inserted"), "\(result.stdout)")
        #expect(result.stdout.contains("  Correlation 1 (the store refused it: "), "\(result.stdout)")
        let counts = try Self.counts(store)
        #expect(counts["bloodPressureSystolic"] == 1)
        #expect(counts["bloodPressureDiastolic"] == nil)
        #expect(counts["dietaryProtein"] == 1)
    }

    /// A route file that does not read, or holds a location no receiver made: the summary names the route and
    /// where, and the workout is kept without it.
    @Test(arguments: [
        (
            "<trkpt lon=\"-0.1\" lat=\"north\"><time>2024-04-04T17:00:01Z</time></trkpt>",
            "location 1 (line 4): lat north"
        ),
        ("<trkpt lon=\"-0.1\" lat=\"51.5\"><ele>10</ele></trkpt>", "location 1 (line 4) has no <time>"),
        ("<trkpt lon=\"-0.1\" lat=\"51.5\"><time>yesterday</time></trkpt>", "time yesterday is not an RFC 3339"),
        ("<trkpt lon=\"-0.1\" lat=\"91\"><time>2024-04-04T17:00:01Z</time></trkpt>", "latitude 91.0 must be"),
        ("<trkpt lon=\"-0.1\" lat=\"51\"><time>2024-04-05T17:00:01Z</time></trkpt>", "within an hour"),
        ("<trkpt lon=\"-0.1\" lat=\"51\"><time>2024-04-04T17:00:01Z</time>", "the GPX file cannot be read"),
        ("<name>no points</name>", "the GPX file holds no location (<trkpt>)"),
    ])
    func aRouteThatCannotBeKeptIsNamedAndTheWorkoutKept(point: String, words: String) async throws {
        let folder = try Folder()
        let gpx = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1">
             <trk><trkseg>
              \(point)
             </trkseg></trk>
            </gpx>

            """
        let zip = try folder.exportZip(Self.everyKind, gpx: gpx)
        let store = folder.path("health.db")
        let result = try WearhouseRunner.run(["import-samples", "--store", store, zip])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains("  WorkoutRoute /workout-routes/route_2024-04-04_6.30pm.gpx 1 (")
                && result.stdout.contains(words), "\(words) in \(result.stdout)")
        #expect(!result.stdout.contains("routes: "), "\(result.stdout)")
        let workouts = try await Self.store(store).workouts(SampleQuery(type: .workout), as: .owner).workouts
        #expect(workouts.count == 1)
        #expect(workouts.first?.routes.isEmpty == true)
    }

    /// A store holding three heart rates from an earlier import, to see that a refused input leaves it alone.
    static func earlierStore(_ folder: Folder) throws -> String {
        let store = folder.path("health.db")
        let first = folder.path("first.xml")
        try (header + heartRates(3) + "</HealthData>\n").write(toFile: first, atomically: true, encoding: .utf8)
        #expect(try WearhouseRunner.run(["import-samples", "--store", store, first]).status == 0)
        return store
    }

    /// Imports `file` into `store`, expecting a refusal with `status` whose message holds `expected`, and the
    /// store as it was (three heart rates, intact).
    static func expectRefused(_ file: String, _ store: String, status: Int32, _ expected: String) throws {
        let result = try WearhouseRunner.run(["import-samples", "--store", store, file])
        #expect(result.status == status, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains(expected), "\(expected) in \(result.stderr)")
        #expect(result.stderr.contains("nothing was imported"), "\(result.stderr)")
        #expect(!result.stderr.contains("root:"), "\(result.stderr)")
        #expect(try counts(store) == ["heartRate": 3])
    }

    @Test func hostileXMLIsRefusedWithoutDamage() throws {
        let folder = try Folder()
        let store = try Self.earlierStore(folder)
        func write(_ name: String, _ text: String) throws -> String {
            let path = folder.path(name)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        var laughs = "<!ENTITY lol0 \"lol\">\n"
        for level in 1...9 {
            laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">\n"
        }
        let bomb = try write(
            "laughs.xml",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE HealthData [\n\(laughs)]>\n<HealthData locale=\"&lol9;\">"
                + Self.heartRates(1) + "</HealthData>\n")
        try Self.expectRefused(bomb, store, status: 65, "entit")
        let external = try write(
            "external.xml",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE HealthData [\n<!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n]>\n"
                + "<HealthData locale=\"en\">&xxe;" + Self.heartRates(1) + "</HealthData>\n")
        try Self.expectRefused(external, store, status: 65, "entit")
        let parameter = try write(
            "parameter.xml",
            "<?xml version=\"1.0\"?>\n<!DOCTYPE HealthData [\n<!ENTITY % xxe SYSTEM \"file:///etc/passwd\">\n%xxe;\n]>\n"
                + "<HealthData locale=\"en\">" + Self.heartRates(1) + "</HealthData>\n")
        try Self.expectRefused(parameter, store, status: 65, "parameter.xml")
        let huge = try write(
            "huge.xml",
            Self.header + Self.heartRates(1)
                + "<Record type=\"HKQuantityTypeIdentifierHeartRate\" sourceName=\""
                + String(repeating: "x", count: 200_000) + "\" startDate=\"2024-04-01 08:00:00 +0100\" "
                + "endDate=\"2024-04-01 08:00:00 +0100\" value=\"60\"/>\n</HealthData>\n")
        try Self.expectRefused(huge, store, status: 65, "longer than 65536 bytes")
        let deep = try write(
            "deep.xml",
            Self.header + Self.heartRates(1) + String(repeating: "<a>", count: 10_000)
                + String(repeating: "</a>", count: 10_000) + "</HealthData>\n")
        try Self.expectRefused(deep, store, status: 65, "deep.xml:")
        let other = try write("other.xml", "<?xml version=\"1.0\"?>\n<html><body><p>hello</p></body></html>\n")
        try Self.expectRefused(other, store, status: 65, "not an Apple Health export")
        let broken = try write("broken.xml", Self.header + Self.heartRates(2) + "<Record type=\"x\"")
        try Self.expectRefused(broken, store, status: 65, "broken.xml:")
    }

    @Test func hostileZipsAreRefusedWithoutDamage() throws {
        let folder = try Folder()
        let store = try Self.earlierStore(folder)
        let good = try folder.exportZip(Self.heartRates(50) + Self.everyKind)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))

        // Cut in half: no central directory.
        let truncated = folder.path("truncated.zip")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        try Self.expectRefused(truncated, store, status: 74, "not a readable zip archive")

        // export.xml's declared size made smaller than what it holds, in both headers.
        let lying = folder.path("lying.zip")
        let patched = try WearhouseRunner.runTool(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import struct, sys
                data = bytearray(open(sys.argv[1], 'rb').read())
                for signature, offset, name_at in ((b'PK\\x03\\x04', 22, 26), (b'PK\\x01\\x02', 24, 28)):
                    at = data.find(signature)
                    while at >= 0:
                        length = struct.unpack_from('<H', data, at + name_at)[0]
                        start = at + name_at + (4 if signature == b'PK\\x03\\x04' else 18)
                        if data[start:start + length].endswith(b'export.xml'):
                            struct.pack_into('<I', data, at + offset, 100)
                        at = data.find(signature, at + 4)
                open(sys.argv[2], 'wb').write(data)
                """,
                good, lying,
            ])
        #expect(patched.status == 0, "\(patched.stderr)")
        try Self.expectRefused(lying, store, status: 74, "export.xml")

        // A bomb: 64 MiB of white space inside the export, deflated more than 500:1.
        let padded = Self.heartRates(1) + String(repeating: " ", count: 64 << 20)
        let bomb = try folder.exportZip(padded, name: "bomb.zip")
        try Self.expectRefused(bomb, store, status: 74, "zip bomb")

        // A zip without export.xml.
        let empty = folder.path("empty.zip")
        let made = try WearhouseRunner.runTool(
            "/usr/bin/env", ["python3", "-m", "zipfile", "-c", empty, folder.path("truncated.zip")])
        #expect(made.status == 0, "\(made.stderr)")
        try Self.expectRefused(empty, store, status: 65, "holds no export.xml")
    }
}

extension String {
    fileprivate func prepending(_ prefix: String) -> String { prefix + self }
}
