import Foundation
import Health
import SQLiteStore
import Testing

/// `import-samples Gadgetbridge` through the real binary: a database of Gadgetbridge's schema
/// (Tests/Resources/gadgetbridge/schema.sql, rows.sql) imports with its counts per type, devices and source, the
/// summary names what it did not import, running it again stores nothing, and the file is not written.
@Suite struct GadgetbridgeImportTests {
    static let resources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Resources/gadgetbridge")

    final class Folder {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-gb-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: url) }

        func path(_ name: String) -> String { url.appendingPathComponent(name).path }

        /// `Gadgetbridge`, as its Export database writes it: schema.sql and rows.sql (and `extra` SQL).
        func database(_ name: String = "Gadgetbridge", extra: String = "") throws -> String {
            let path = path(name)
            let schema = try String(contentsOf: resources.appendingPathComponent("schema.sql"), encoding: .utf8)
            let rows = try String(contentsOf: resources.appendingPathComponent("rows.sql"), encoding: .utf8)
            try SQLiteConnection(path: path).execute(schema + rows + extra)
            return path
        }
    }

    @Test func aGadgetbridgeDatabaseImportsOnceAndIsNotWritten() async throws {
        let folder = try Folder()
        let database = try folder.database()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        let store = folder.path("health.db")
        let result = try WearhouseRunner.run(["import-samples", "--store", store, database])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("33 samples: 33 inserted, 0 duplicate, 0 conflict"), "\(result.stdout)")
        for line in [
            "by type:\n  heartRate: 14 read, 14 new, 0 already stored",
            "  stepCount: 8 read, 8 new, 0 already stored",
            "device 1: Mi Band 3, Xiaomi, XMSH05HM, firmware V2.4.0.2 (C8:0F:10:00:00:01, Gadgetbridge type 11)",
            "  table XWATCH_ACTIVITY_SAMPLE 2 (rows of a sample table whose device family is not mapped)",
            "  table ALARM 1 (", "  MI_BAND_ACTIVITY_SAMPLE HEART_RATE=255 1 (Gadgetbridge's marker of no measurement",
            "  MI_BAND_ACTIVITY_SAMPLE TIMESTAMP 1 (the timestamp is not from 2000 to 2100",
        ] {
            #expect(result.stdout.contains(line), "\(line) in \(result.stdout)")
        }

        let again = try WearhouseRunner.run(["import-samples", "--store", store, database])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasPrefix("33 samples: 0 inserted, 33 duplicate, 0 conflict"), "\(again.stdout)")
        #expect(again.stdout.contains("  sleepAnalysis: 11 read, 0 new, 11 already stored"), "\(again.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == bytes)

        let opened = try SQLiteHealthStore(path: store)
        let rates = try await opened.samples(SampleQuery(type: .heartRate, limit: 100), as: .owner).samples
        #expect(rates.count == 14)
        #expect(rates.allSatisfy { $0.source.identifier == "Gadgetbridge" })
        let pine = rates.filter { $0.device?.localIdentifier == "E5:00:00:00:00:03" }
        #expect(pine.map(\.value) == [61, 62, 70, 90])
        #expect(pine.first?.device?.name == "InfiniTime" && pine.first?.device?.firmwareVersion == "1.14.0")
        let sleep = try await opened.samples(SampleQuery(type: .sleepAnalysis, limit: 100), as: .owner).samples
        #expect(sleep.count == 11)
    }

    @Test func anotherSQLiteDatabaseIsRefused() throws {
        let folder = try Folder()
        let other = folder.path("other.db")
        try SQLiteConnection(path: other).execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('x');")
        let result = try WearhouseRunner.run(["import-samples", "--store", folder.path("health.db"), other])
        #expect(result.status == 65, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("without Gadgetbridge's tables"), "\(result.stderr)")
    }

    /// An older copy of the database whose night ends in the middle of a stage, then a newer copy going on with it:
    /// the newer copy adds only the rest of the night (the import asks the store for the Gadgetbridge sleep it
    /// holds), and each minute of sleep is stored once.
    @Test func aNewerCopyAddsOnlyTheRestOfTheNight() async throws {
        let folder = try Folder()
        let night: Int64 = 1_736_467_200
        func rows(_ minutes: Int) -> String {
            (0..<minutes).map { minute in
                "INSERT INTO MI_BAND_ACTIVITY_SAMPLE VALUES (\(night + Int64(minute) * 60), 1, 1, 2, 0, 11, 0);"
            }.joined(separator: "\n")
        }
        let older = try folder.database("older", extra: rows(4))
        let newer = try folder.database("newer", extra: rows(10))
        let store = folder.path("health.db")
        let first = try WearhouseRunner.run(["import-samples", "--store", store, older])
        #expect(first.stdout.hasPrefix("34 samples: 34 inserted"), "\(first.stdout)")
        let second = try WearhouseRunner.run(["import-samples", "--store", store, newer])
        #expect(second.stdout.hasPrefix("34 samples: 1 inserted, 33 duplicate"), "\(second.stdout)")
        let again = try WearhouseRunner.run(["import-samples", "--store", store, newer])
        #expect(again.stdout.hasPrefix("34 samples: 0 inserted, 34 duplicate"), "\(again.stdout)")
        let sleep = try await SQLiteHealthStore(path: store).samples(
            SampleQuery(type: .sleepAnalysis, from: Instant(seconds: night), limit: 100), as: .owner
        ).samples
        #expect(
            sleep.map { ($0.start.milliseconds / 1_000 - night, $0.end.milliseconds / 1_000 - night) }.map {
                "\($0)-\($1)"
            } == ["0-240", "240-600"])
    }
}
