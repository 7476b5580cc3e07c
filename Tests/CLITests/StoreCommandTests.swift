import Foundation
import Support
import Testing

/// The store commands through the real binary, on a store in a temporary directory.
@Suite struct StoreCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    static let lines = """
        {"type":"heartRate","start":"2025-03-30T00:00:00+01:00","value":60,"source":"org.wearhouse.gateway","device":"A0:9E:1A:00:00:01","device_name":"Polar H10","subject":"alice"}
        {"type":"heartRate","start":"2025-03-30T23:30:00+02:00","value":80,"source":"org.wearhouse.gateway","device":"A0:9E:1A:00:00:01","subject":"alice"}
        {"type":"stepCount","start":"2025-03-30T10:00:00+02:00","end":"2025-03-30T10:10:00+02:00","value":1000,"source":"org.wearhouse.gateway","device":"footpod","subject":"alice"}
        {"type":"stepCount","start":"2025-03-30T10:05:00+02:00","end":"2025-03-30T10:15:00+02:00","value":600,"source":"org.wearhouse.gateway","device":"watch","subject":"alice"}
        {"type":"distanceWalkingRunning","start":"2025-03-30T10:00:00+02:00","end":"2025-03-30T10:10:00+02:00","value":0.8,"unit":"km","source":"x"}

        """

    func importFixture() throws {
        let result = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: Self.lines)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(arguments: [["store", "check"], ["store", "prune"], ["apps"]])
    func aMistypedStorePathIsAnErrorAndCreatesNothing(_ command: [String]) throws {
        let mistyped = directory.appendingPathComponent("typo/health.db").path
        let result = try WearhouseRunner.run(command + ["--store", mistyped])
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("no store at \(mistyped)"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("typo").path))
    }

    @Test(arguments: ["mysql://db/health", "http://host/x"])
    func anUnknownStoreSchemeIsAUsageError(_ url: String) throws {
        let result = try WearhouseRunner.run(["store", "check", "--store", url])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("unknown store scheme"))
        #expect(!FileManager.default.fileExists(atPath: url))
    }

    @Test func importTwiceStoresNothingNew() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: Self.lines)
        #expect(first.stdout == "5 samples: 5 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n")
        let second = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: Self.lines)
        #expect(second.stdout == "5 samples: 0 inserted, 5 duplicate, 0 conflict, 0 replaced, 0 stale\n")
    }

    @Test func aBadLineIsReportedWithItsNumberAndNothingIsWritten() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = Self.lines + "{\"type\":\"heartRate\",\"start\":\"2025-03-31T00:00:00Z\",\"value\":\"fast\"}\n"
        let result = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: input)
        #expect(result.status == 65)
        #expect(result.stderr == "Error: stdin:6: missing or non-numeric \"value\"; nothing was imported\n")
        // An out-of-range value is caught by the store, which names the sample in its batch: the error names the
        // line, and the import is rejected whole.
        let zero = "{\"type\":\"heartRate\",\"start\":\"2025-03-31T00:00:00Z\",\"value\":0}\n"
        let rejected = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: Self.lines + zero)
        #expect(rejected.status == 65)
        #expect(
            rejected.stderr
                == "Error: stdin:6: heartRate value 0.0 count/min is outside 1.0...300.0; nothing was imported\n")
        let check = try WearhouseRunner.run(["store", "check", "--store", store, "--json"])
        #expect(try WearhouseRunner.json(check.stdout)["samples"] as? [String: Int] == [:])
    }

    @Test func samplesAsJSONCarryUnitsAndProvenance() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        let result = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "distanceWalkingRunning", "--format", "json",
        ])
        #expect(result.status == 0)
        let sample = try WearhouseRunner.json(result.stdout)
        #expect(sample["value"] as? Double == 800)  // 0.8 km, stored in metres
        #expect(sample["unit"] as? String == "m")
        #expect(sample["start"] as? String == "2025-03-30T10:00:00.000+02:00")
        let csv = try WearhouseRunner.run([
            "samples", "--store", store, "--type", "heartRate", "--format", "csv", "--subject", "alice",
        ])
        #expect(csv.stdout.split(separator: "\n").count == 3)
        #expect(
            csv.stdout.hasPrefix(
                "uuid,type,start,end,value,unit,source,source_version,device,device_name,subject,metadata\n"))
    }

    @Test func dailyStatisticsFollowTheTimeZonesCalendar() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        let result = try WearhouseRunner.run([
            "stats", "--store", store, "--type", "heartRate", "--interval", "1d", "--from", "2025-03-30", "--to",
            "2025-03-31", "--time-zone", "Europe/Berlin", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let day = try WearhouseRunner.json(result.stdout)
        #expect(day["duration_s"] as? Double == 82_800)  // the spring-forward day has 23 hours
        #expect(day["count"] as? Double == 2)
        #expect(day["avg"] as? Double == 70)
        #expect(day["start"] as? String == "2025-03-30T00:00:00.000+01:00")
        #expect(day["end"] as? String == "2025-03-31T00:00:00.000+02:00")
    }

    @Test func stepsAreMergedUnlessSeparatedBySource() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        let arguments = [
            "stats", "--store", store, "--type", "stepCount", "--interval", "1d", "--from", "2025-03-30", "--to",
            "2025-03-31", "--time-zone", "Europe/Berlin", "--json",
        ]
        let merged = try WearhouseRunner.json(try WearhouseRunner.run(arguments).stdout)
        // Unranked sources fill each other's gaps: 5 min of the footpod (500) + 10 min of the watch (600).
        #expect(merged["sum"] as? Double == 1_100)
        let separate = try WearhouseRunner.run(arguments + ["--by-source"]).stdout.split(separator: "\n")
        #expect(try separate.map { try WearhouseRunner.json($0)["sum"] as? Double } == [1_000, 600])
    }

    @Test func grantRevokeAndApps() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(
            try WearhouseRunner.run([
                "grant", "my.app", "--store", store, "--read", "heartRate,stepCount", "--write", "stepCount",
            ]).status == 0)
        #expect(try WearhouseRunner.run(["revoke", "my.app", "--store", store, "--read", "stepCount"]).status == 0)
        let apps = try WearhouseRunner.json(try WearhouseRunner.run(["apps", "--store", store, "--json"]).stdout)
        #expect(apps["read"] as? [String] == ["heartRate"])
        #expect(apps["write"] as? [String] == ["stepCount"])
        let unknown = try WearhouseRunner.run(["grant", "my.app", "--store", store, "--read", "steps"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("Error: unknown type 'steps'"))
    }

    @Test func storeCheckAndMissingStores() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        let check = try WearhouseRunner.run(["store", "check", "--store", store])
        #expect(check.status == 0)
        #expect(check.stdout.contains("integrity  ok\n"))
        #expect(check.stdout.contains("samples    distanceWalkingRunning 1, heartRate 2, stepCount 2\n"))
        let missing = try WearhouseRunner.run([
            "samples", "--type", "heartRate", "--store", directory.appendingPathComponent("nope.db").path,
        ])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("Error: no store at "))
        let postgres = try WearhouseRunner.run([
            "samples", "--type", "heartRate", "--store", "postgresql://localhost/x",
        ])
        #expect(postgres.status == 69)
    }

    /// The mode of `path`, in octal digits.
    static func mode(_ path: String) throws -> String {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return String(((attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777, radix: 8)
    }

    /// Health data is the owner's whatever the umask: a store left readable by others is narrowed when it is next
    /// opened, and an export is written 0600 (over an existing file too).
    @Test func healthDataFilesAreTheOwners() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        let files = [store, store + "-access"]
        for file in files { try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file) }
        let check = try WearhouseRunner.run(["store", "check", "--store", store])
        #expect(check.status == 0, "\(check.stderr)")
        for file in files + [store + "-wal"] where FileManager.default.fileExists(atPath: file) {
            #expect(try Self.mode(file) == "600", "\(file)")
        }
        let out = directory.appendingPathComponent("export.csv").path
        #expect(FileManager.default.createFile(atPath: out, contents: Data("old\n".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: out)
        let export = try WearhouseRunner.run(["export", "--store", store, "--format", "csv", "--out", out])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try Self.mode(out) == "600")
        #expect(try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").count == 6)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasSuffix(".partial") }
        )
    }

    @Test func metadataIntegersAreExportedAsIntegers() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let line =
            #"{"type":"heartRate","start":"2025-03-30T10:00:00Z","value":62,"unit":"count/min","source":"app","#
            + #""metadata":{"count":3,"ratio":0.5,"whole":2.0}}"#
        let imported = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: line + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        let ndjson = try WearhouseRunner.run(["export", "--store", store, "--format", "ndjson"])
        #expect(ndjson.stdout.contains(#""count":3,"#), "\(ndjson.stdout)")
        #expect(ndjson.stdout.contains(#""ratio":0.5"#))
        #expect(ndjson.stdout.contains(#""whole":2.0"#))
    }

    /// A damaged access log (the side file) is named, and only the commands that need it fail.
    @Test func aCorruptAccessLogIsNamedAndOtherCommandsWork() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        for suffix in ["-access-wal", "-access-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        try Data(repeating: 0x5A, count: 8_192).write(to: URL(fileURLWithPath: store + "-access"))
        let samples = try WearhouseRunner.run(["samples", "--type", "heartRate", "--store", store])
        #expect(samples.status == 0, "\(samples.stderr)")
        #expect(samples.stdout.split(separator: "\n").count == 3)
        #expect(samples.stderr.contains("warning: the access log \(store)-access cannot be used"))
        let log = try WearhouseRunner.run(["apps", "--log", "--store", store])
        #expect(log.status != 0)
        #expect(log.stderr.contains("the access log \(store)-access cannot be used"), "\(log.stderr)")
        #expect(!log.stderr.contains("cannot open the store"))
    }

    @Test func exportRoundTripsThroughOpenMHealthAndDeletes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        let ndjson = try WearhouseRunner.run(["export", "--store", store, "--format", "ndjson"])
        #expect(ndjson.status == 0, "\(ndjson.stderr)")
        let points = ndjson.stdout.split(separator: "\n")
        #expect(points.count == 5)
        let heart = try WearhouseRunner.json(points[0])
        let body = try #require(heart["body"] as? [String: Any])
        #expect((body["heart_rate"] as? [String: Any])?["unit"] as? String == "beats/min")
        let header = try #require(heart["header"] as? [String: Any])
        #expect((header["schema_id"] as? [String: Any])?["name"] as? String == "heart-rate")

        // Importing the export into a second store gives the same samples, ids included.
        let copy = directory.appendingPathComponent("copy.db").path
        let imported = try WearhouseRunner.run(["import-samples", "--store", copy, "-"], stdin: ndjson.stdout)
        #expect(
            imported.stdout == "5 samples: 5 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n",
            "\(imported.stderr)")
        for type in ["heartRate", "stepCount", "distanceWalkingRunning"] {
            let original = try WearhouseRunner.run(["samples", "--store", store, "--type", type, "--format", "csv"])
            let copied = try WearhouseRunner.run(["samples", "--store", copy, "--type", type, "--format", "csv"])
            #expect(original.stdout == copied.stdout)
        }

        let fhir = try WearhouseRunner.run(["export", "--store", store, "--format", "fhir", "--type", "heartRate"])
        let observation = try WearhouseRunner.json(fhir.stdout.split(separator: "\n")[0])
        #expect(observation["resourceType"] as? String == "Observation")
        let code = try #require(observation["code"] as? [String: Any])
        #expect(((code["coding"] as? [[String: Any]])?.first)?["code"] as? String == "8867-4")
        #expect((observation["valueQuantity"] as? [String: Any])?["code"] as? String == "/min")

        let dryRun = try WearhouseRunner.run([
            "delete", "--store", store, "--type", "heartRate", "--from", "2025-03-29", "--to", "2025-04-01",
            "--dry-run",
        ])
        #expect(dryRun.stdout == "would delete 2 samples\n")
        let deleted = try WearhouseRunner.run([
            "delete", "--store", store, "--type", "heartRate", "--from", "2025-03-29", "--to", "2025-04-01", "--yes",
        ])
        #expect(deleted.stdout == "deleted 2 samples\n")
        let after = try WearhouseRunner.run(["samples", "--store", store, "--type", "heartRate"])
        #expect(after.stdout == "No samples.\n")
    }

    @Test func readersWorkWhileAnotherProcessWrites() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try importFixture()
        // A writer importing 5,000 samples (one batch, a second or so), and readers querying meanwhile (WAL mode).
        let lines = (0..<5_000).map { index in
            "{\"type\":\"stepCount\",\"start\":\"\(isoUTC(1_800_000_000 + index * 60))\","
                + "\"end\":\"\(isoUTC(1_800_000_000 + index * 60 + 60))\",\"value\":\(index % 90),"
                + "\"source\":\"app\",\"subject\":\"bob\"}"
        }
        let file = directory.appendingPathComponent("writer.ndjson")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let writer = try WearhouseRunner.start(
            ["import-samples", "--store", store, file.path], errors: .inherited)
        var reads = 0
        while writer.isRunning || reads < 3 {
            let result = try WearhouseRunner.run([
                "samples", "--store", store, "--type", "heartRate", "--format", "csv",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").count == 3)
            reads += 1
        }
        writer.wait()
        #expect(writer.wait().status == 0)
        let check = try WearhouseRunner.json(
            try WearhouseRunner.run(["store", "check", "--store", store, "--json"]).stdout)
        #expect((check["samples"] as? [String: Int])?["stepCount"] == 5_002)
    }
}
