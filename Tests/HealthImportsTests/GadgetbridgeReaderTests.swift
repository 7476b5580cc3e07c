import Foundation
import Health
import HealthImports
import SQLiteStore
import Testing

/// Gadgetbridge's database (Sources/HealthImports/GadgetbridgeReader.swift): one built from Gadgetbridge's schema
/// as greenDAO creates it (Tests/Resources/gadgetbridge/schema.sql) and rows of five device families
/// (rows.sql) imports with the right counts per type, values, devices and source; what is not imported is named;
/// importing it again stores nothing; the file is the same bytes after.
@Suite final class GadgetbridgeReaderTests {
    static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Resources/gadgetbridge")

    /// The test's temporary folder, removed after it.
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gadgetbridge-\(UUID())")

    deinit { try? FileManager.default.removeItem(at: scratch) }

    /// A folder of its own in the test's folder.
    func folder() throws -> URL {
        let folder = scratch.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A fresh database from schema.sql and rows.sql (plus `extra` SQL) in a folder of its own.
    func database(_ extra: String = "") throws -> String {
        let folder = try folder()
        let path = folder.appendingPathComponent("Gadgetbridge").path
        let schema = try String(contentsOf: Self.resources.appendingPathComponent("schema.sql"), encoding: .utf8)
        let rows = try String(contentsOf: Self.resources.appendingPathComponent("rows.sql"), encoding: .utf8)
        let connection = try SQLiteConnection(path: path)
        try connection.execute(schema + rows + extra)
        return path
    }

    static func readAll(_ path: String) throws -> (GadgetbridgeReader, [QuantitySample]) {
        let reader = try GadgetbridgeReader(path: path, progress: nil)
        var samples: [QuantitySample] = []
        while let batch = try reader.next() {
            for series in batch.quantities { samples += (0..<series.count).map { series.sample(at: $0) } }
        }
        return (reader, samples)
    }

    static let start: Int64 = 1_735_718_400

    @Test func isFoundFromItsHeaderAndTables() throws {
        let path = try database()
        #expect(GadgetbridgeDatabase.kind(ofFileAt: path) == .gadgetbridge)
        let other = path + "-other.db"
        try SQLiteConnection(path: other).execute("CREATE TABLE t (x)")
        #expect(GadgetbridgeDatabase.kind(ofFileAt: other) == .otherSQLite)
        let text = path + ".txt"
        try Data("{\"type\": \"heartRate\"}\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(GadgetbridgeDatabase.kind(ofFileAt: text) == nil)
    }

    @Test func fiveFamiliesImportWithTheirCountsValuesDevicesAndSource() throws {
        let path = try database()
        let (reader, samples) = try Self.readAll(path)
        #expect(reader.read == ["stepCount": 8, "heartRate": 14, "sleepAnalysis": 11])
        #expect(samples.count == 33)
        #expect(samples.allSatisfy { $0.source == GadgetbridgeReader.source })
        #expect(Set(samples.map(\.id)).count == 33)

        // The Mi Band's first minute: 30 steps over 60 s, 72 bpm, its device with the newest firmware.
        let band = Device(
            name: "Mi Band 3", manufacturer: "Xiaomi", model: "XMSH05HM", firmwareVersion: "V2.4.0.2",
            localIdentifier: "C8:0F:10:00:00:01")
        let first = try #require(samples.first { $0.type == .stepCount && $0.start == Instant(seconds: Self.start) })
        #expect(first.value == 30)
        #expect(first.end == Instant(seconds: Self.start + 60))
        #expect(first.device == band)
        let rate = try #require(samples.first { $0.type == .heartRate && $0.start == Instant(seconds: Self.start) })
        #expect(rate.value == 72 && rate.end == rate.start && rate.device == band)
        let bandRates = samples.filter { $0.type == .heartRate && $0.device == band }.map(\.value)
        #expect(bandRates == [72, 60, 58, 55, 65, 50, 52, 80])

        // Sleep: consecutive minutes of one stage are one sample.
        func sleep(_ device: String) -> [(Int64, Int64, Double)] {
            samples.filter { $0.type == .sleepAnalysis && $0.device?.localIdentifier == device }.map {
                ($0.start.milliseconds / 1_000 - Self.start, $0.end.milliseconds / 1_000 - Self.start, $0.value)
            }
        }
        let band1 = sleep("C8:0F:10:00:00:01")
        // Mi Band: light 180-300 s, deep 300-420 s (the next row is 19 minutes later, so 60 s); Huami extended, the
        // next day: deep, REM, light a minute each.
        #expect(band1.map(\.0) == [180, 300, 86_400, 86_460, 86_520])
        #expect(band1.map(\.1) == [300, 420, 86_460, 86_520, 86_580])
        #expect(band1.map(\.2) == [3, 4, 4, 5, 3])
        let pebble = sleep("B0:B4:48:00:00:02")
        #expect(pebble.map(\.2) == [3, 4])
        #expect(pebble.map { $0.1 - $0.0 } == [3_600, 1_800])
        let pine = sleep("E5:00:00:00:00:03")
        #expect(pine.map(\.2) == [3, 5, 2])
        #expect(pine.map { $0.1 - $0.0 } == [120, 60, 60])
        #expect(sleep("F0:00:00:00:00:05").map(\.2) == [4])
        #expect(sleep("D0:00:00:00:00:04").isEmpty)

        let steps = samples.filter { $0.type == .stepCount }.map(\.value)
        #expect(steps.reduce(0, +) == 249)  // 30 + 12 (Mi Band), 40 (Huami), 20 + 25, 100, 15, 7

        #expect(reader.devices.count == 5)
        #expect(reader.devices[3]?.device.firmwareVersion == "1.14.0")
        #expect(reader.devices[4]?.device.model == "HW.0.0")
        #expect(reader.devices[5]?.type == 60)
    }

    @Test func whatIsNotImportedIsNamedAndCounted() throws {
        let (reader, _) = try Self.readAll(try database())
        let skipped = reader.notImported
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE HEART_RATE=255"]?.count == 1)
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE HEART_RATE=-1"]?.count == 1)
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE HEART_RATE=0"]?.count == 1)
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE HEART_RATE"]?.count == 1)  // 300 bpm
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE HEART_RATE"]?.first == "TIMESTAMP=1735719900 DEVICE_ID=1")
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE STEPS"]?.count == 1)  // 50,000 steps in 15 minutes
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE TIMESTAMP"]?.first == "TIMESTAMP=100 DEVICE_ID=1")
        #expect(skipped["MI_BAND_ACTIVITY_SAMPLE DEVICE_ID"]?.count == 1)
        #expect(skipped["PEBBLE_HEALTH_ACTIVITY_SAMPLE HEART_RATE=0"]?.count == 2)
        #expect(skipped["PEBBLE_HEALTH_ACTIVITY_OVERLAY RAW_KIND=5"]?.count == 1)
        #expect(skipped["table XWATCH_ACTIVITY_SAMPLE"]?.count == 2)
        #expect(skipped["table XWATCH_ACTIVITY_SAMPLE"]?.reason.contains("not mapped") == true)
        #expect(skipped["table ALARM"]?.count == 1)
        #expect(skipped["table USER"]?.count == 1)
        #expect(skipped["table USER_ATTRIBUTES"] == nil)  // empty
        #expect(skipped["table android_metadata"] == nil)
        let tables: [String: Int64] = [
            "MI_BAND_ACTIVITY_SAMPLE": 11, "HUAMI_EXTENDED_ACTIVITY_SAMPLE": 4, "PEBBLE_HEALTH_ACTIVITY_SAMPLE": 2,
            "PEBBLE_HEALTH_ACTIVITY_OVERLAY": 3, "PINE_TIME_ACTIVITY_SAMPLE": 5, "HYBRID_HRACTIVITY_SAMPLE": 2,
            "GARMIN_ACTIVITY_SAMPLE": 3,
        ]
        #expect(reader.tables == tables)
    }

    /// Garmin's sleep stages and resting heart rates (time samples, in milliseconds), and the first Mi Band's
    /// kinds (4 deep, 5 light) in the table it shares with the bands after it.
    @Test func garminSleepAndRestingHeartRateAndTheFirstMiBand() throws {
        let garmin = try String(contentsOf: Self.resources.appendingPathComponent("garmin.sql"), encoding: .utf8)
        let miBand1 = """
            INSERT INTO DEVICE VALUES (6, 'MI', 'Xiaomi', 'C8:0F:10:00:00:06', 10, NULL, NULL, NULL);
            INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (1736380800, 6, 1, 5, 0, 5, 0);
            INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (1736380860, 6, 1, 5, 0, 5, 0);
            INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (1736380920, 6, 1, 2, 0, 4, 0);
            INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (1736380980, 6, 1, 2, 0, 4, 0);
            INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (1736381040, 6, 1, 0, 0, 3, 0);
            INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (1736381100, 6, 1, 40, 25, 9, 0);

            """
        let (reader, samples) = try Self.readAll(try database(garmin + miBand1))
        func sleep(_ device: String) -> [(Int64, Int64, Double)] {
            samples.filter { $0.type == .sleepAnalysis && $0.device?.localIdentifier == device }.map {
                ($0.start.milliseconds / 1_000, $0.end.milliseconds / 1_000, $0.value)
            }
        }
        // The activity table's deep minute (rows.sql), then the stage table's night: light, deep, REM, awake a minute
        // or two each; the unmeasurable row is counted, not stored.
        let night: Int64 = 1_736_208_000
        #expect(
            sleep("F0:00:00:00:00:05").filter { $0.0 >= night }.map { ($0.0 - night, $0.1 - night, $0.2) }.map {
                "\($0.0)-\($0.1):\(Int($0.2))"
            } == ["0-120:3", "120-240:4", "240-300:5", "300-360:2"])
        #expect(reader.notImported["GARMIN_SLEEP_STAGE_SAMPLE STAGE=0"]?.count == 1)
        #expect(reader.notImported["GARMIN_SLEEP_STAGE_SAMPLE STAGE=0"]?.first == "TIMESTAMP=1736208360 DEVICE_ID=5")
        let resting = samples.filter { $0.type.identifier == "restingHeartRate" }
        #expect(resting.map(\.value) == [52])
        #expect(resting.first?.start == Instant(seconds: night))
        #expect(resting.first?.device?.localIdentifier == "F0:00:00:00:00:05")
        #expect(reader.notImported["GARMIN_HEART_RATE_RESTING_SAMPLE HEART_RATE=0"]?.count == 1)
        #expect(reader.tables["GARMIN_SLEEP_STAGE_SAMPLE"] == 7)
        #expect(reader.tables["GARMIN_HEART_RATE_RESTING_SAMPLE"] == 2)
        // The first Mi Band: light two minutes, deep two; not worn (3) is not sleep; the kind 9 of the bands after
        // it is not sleep on it either.
        let first: Int64 = 1_736_380_800
        #expect(
            sleep("C8:0F:10:00:00:06").map { "\($0.0 - first)-\($0.1 - first):\(Int($0.2))" } == [
                "0-120:3", "120-240:4",
            ])
        #expect(reader.devices[6]?.type == 10)
    }

    /// A newer copy of the database whose night goes on from where the older copy's rows ended: importing the
    /// older, then the newer, stores the older copy's last run as it was and only the rest of the night after it,
    /// so the stored sleep covers each minute once; importing the newer again stores nothing.
    @Test func aNewerCopyContinuingTheLastSleepRunAddsOnlyTheRest() async throws {
        let night: Int64 = 1_736_467_200
        func rows(_ minutes: Int) -> String {
            (0..<minutes).map { minute in
                // Light for 3 minutes, then deep.
                let kind = minute < 3 ? 9 : 11
                return
                    "INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (\(night + Int64(minute) * 60), 1, 1, 2, 0, \(kind), 0);"
            }.joined(separator: "\n")
        }
        let older = try database(rows(5))
        let newer = try database(rows(9))
        let store = try SQLiteHealthStore(path: older + "-store.db")
        func importing(_ path: String) async throws -> [WriteOutcome: Int] {
            let reader = try GadgetbridgeReader(path: path, progress: nil)
            var stored: [String: [Int64: Int64]] = [:]
            let page = try await store.samples(
                SampleQuery(type: .sleepAnalysis, sources: ["Gadgetbridge"], limit: 10_000), as: .owner)
            for sample in page.samples {
                stored[sample.device?.key ?? "", default: [:]][sample.start.milliseconds] = sample.end.milliseconds
            }
            reader.storedSleep = stored
            return try await store.saveAll(as: .owner) { try reader.next() }
        }
        #expect(try await importing(older)[.inserted] == 33 + 2)
        let second = try await importing(newer)
        #expect(second[.inserted] == 1)
        #expect(second[.duplicate] == 33 + 1)
        #expect(try await importing(newer) == [.duplicate: 33 + 2])
        let sleep = try await store.samples(
            SampleQuery(type: .sleepAnalysis, devices: ["C8:0F:10:00:00:01"], limit: 100), as: .owner
        ).samples.filter { $0.start.milliseconds >= night * 1_000 }
        // Light 0-180 s; deep 180-300 s from the older copy (its last row extended by 60 s), then 300-540 s.
        #expect(
            sleep.map { "\($0.start.milliseconds / 1_000 - night)-\($0.end.milliseconds / 1_000 - night)" } == [
                "0-180", "180-300", "300-540",
            ])
    }

    @Test func reimportingStoresNothingNewAndTheFileIsUnchanged() async throws {
        let path = try database()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        let store = try SQLiteHealthStore(path: path + "-store.db")
        let reader = try GadgetbridgeReader(path: path, progress: nil)
        let first = try await store.saveAll(as: .owner) { try reader.next() }
        #expect(first == [.inserted: 33])
        let again = try GadgetbridgeReader(path: path, progress: nil)
        let second = try await store.saveAll(as: .owner) { try again.next() }
        #expect(second == [.duplicate: 33])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == modified)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(!files.contains("Gadgetbridge-journal") && !files.contains("Gadgetbridge-wal"))
    }

    @Test func aDatabaseInWALModeIsReadWithoutFilesBesideIt() throws {
        let folder = try folder()
        // A name SQLite URIs must escape.
        let path = folder.appendingPathComponent("Gadget?bridge #1%").path
        let schema = try String(contentsOf: Self.resources.appendingPathComponent("schema.sql"), encoding: .utf8)
        let rows = try String(contentsOf: Self.resources.appendingPathComponent("rows.sql"), encoding: .utf8)
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA journal_mode = WAL; " + schema + rows)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Gadget?bridge #1%"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let (reader, _) = try Self.readAll(path)
        #expect(reader.read["heartRate"] == 14)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Gadget?bridge #1%"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    @Test func progressReachesTheEnd() throws {
        let path = try database()
        let seen = Seen()
        let reader = try GadgetbridgeReader(path: path, progress: { seen.add($0) })
        while try reader.next() != nil {}
        #expect(seen.values.last == 1)
    }

    @Test func aDatabaseWithoutDevicesIsRefused() throws {
        let folder = try folder()
        let path = folder.appendingPathComponent("other.db").path
        try SQLiteConnection(path: path).execute("CREATE TABLE MI_BAND_ACTIVITY_SAMPLE (TIMESTAMP, DEVICE_ID)")
        #expect(throws: GadgetbridgeError.self) { try GadgetbridgeReader(path: path, progress: nil) }
    }
}

/// Progress fractions, collected from the reader's callback.
final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [Double] = []

    func add(_ value: Double) { lock.withLock { list.append(value) } }
    var values: [Double] { lock.withLock { list } }
}
