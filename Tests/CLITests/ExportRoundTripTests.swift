import Foundation
import Health
import SQLiteStore
import TestSupport
import Testing

/// An export of everything holds everything, heartbeat series and metadata included, in every format; importing
/// the ndjson export into an empty store gives the same store.
@Suite struct ExportRoundTripTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-cli-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }
    var copy: String { directory.appendingPathComponent("copy.db").path }

    static let minute: Int64 = 1_743_328_800_000  // 2025-03-30T10:00:00Z

    /// Heart rates from two sources with metadata of every kind, steps over an interval in +05:30, and two
    /// heartbeat series (one with a gap and metadata), saved through the library.
    func fill() async throws -> SQLiteHealthStore {
        let writer = try SQLiteHealthStore(path: store)
        let strap = Device(
            name: "Polar H10", manufacturer: "Polar", model: "H10", hardwareVersion: "1", firmwareVersion: "5.0",
            softwareVersion: "2", serialNumber: "C1234", localIdentifier: "A0:9E:1A:00:00:01")
        let gateway = Source(identifier: "org.wearhouse.gateway", version: "1.2")
        let app = Source(identifier: "com.example.app")
        let metadata: [String: MetadataValue] = [
            MetadataKey.externalUUID: .string("r-1"), MetadataKey.syncVersion: .number(3), "laps": .number(42),
            "ratio": .number(0.125), MetadataKey.wasUserEntered: .bool(false),
            "depth": .quantity(1.5, unit: "m"), "noted": .date(Instant(milliseconds: Self.minute - 1_234)),
            "note": .string("a, \"quoted\"\nline"),
        ]
        let at = { (seconds: Int64) in Instant(milliseconds: Self.minute + seconds * 1_000) }
        let quantities = [
            QuantitySample(
                type: .heartRate, start: at(0), end: at(0), startOffsetSeconds: 7_200, value: 61.5, source: gateway,
                device: strap, subject: "alice", metadata: metadata),
            QuantitySample(
                type: .heartRate, start: at(5), end: at(5), value: 70, source: app, subject: "bob",
                metadata: [MetadataKey.externalUUID: .string("r-2"), MetadataKey.syncVersion: .number(9_007_199_254)]),
            QuantitySample(
                type: .stepCount, start: at(0), end: at(600), startOffsetSeconds: 19_800, value: 1_000, source: app),
        ]
        _ = try await writer.save(quantities, as: .owner)
        let rr = 1_000.0 * 900 / 1024
        let beats = (1...4).map {
            Beat(offsetMilliseconds: Double($0) * rr, rrMilliseconds: rr, precededByGap: $0 == 3)
        }
        let series = [
            HeartbeatSeriesSample(
                start: at(0), end: at(60), startOffsetSeconds: 7_200, beats: beats, source: gateway, device: strap,
                subject: "alice", metadata: ["sensorContactLost": .bool(true)]),
            HeartbeatSeriesSample(start: at(60), end: at(120), beats: Array(beats.prefix(2)), source: app),
        ]
        _ = try await writer.save(series, as: .owner)
        return writer
    }

    /// The contents with the ids of samples that have an `externalUUID` left out: the store names each version of
    /// such a sample anew when it is written (docs/store-semantics.md, "Identity"), so a copy's differ.
    static func comparable(_ contents: StoreContents) -> StoreContents {
        var contents = contents
        let placeholder = UUID(uuidString: "00000000-0000-4000-8000-000000000000")!
        contents.quantities = contents.quantities.map { sample in
            var sample = sample
            if sample.metadata[MetadataKey.externalUUID] != nil { sample.id = placeholder }
            return sample
        }.sorted {
            ($0.id.uuidString, $0.start, $0.source.identifier) < ($1.id.uuidString, $1.start, $1.source.identifier)
        }
        return contents
    }

    @Test func theNDJSONExportImportedIntoAnEmptyStoreGivesTheSameStore() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = try await fill()
        let export = try WearhouseRunner.run(["export", "--store", store, "--format", "ndjson"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.split(separator: "\n").count == 5)
        let imported = try WearhouseRunner.run(["import-samples", "--store", copy, "-"], stdin: export.stdout)
        #expect(
            imported.stdout == "5 samples: 5 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n",
            "\(imported.stderr)")
        let expected = try await StoreContents.of(original)
        #expect(expected.quantities.count == 3 && expected.series.count == 2)
        let copied = try await StoreContents.of(try SQLiteHealthStore(path: copy))
        #expect(Self.comparable(copied) == Self.comparable(expected))
        #expect(copied.series.map(\.id) == expected.series.map(\.id))
    }

    @Test func samplesAsJSONKeepTheMetadataAndSeriesThroughAnImport() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = try await fill()
        var lines = ""
        for type in ["heartRate", "heartbeatSeries"] {
            let listed = try WearhouseRunner.run(["samples", "--store", store, "--type", type, "--format", "json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            lines += listed.stdout
        }
        let imported = try WearhouseRunner.run(["import-samples", "--store", copy, "-"], stdin: lines)
        #expect(imported.status == 0, "\(imported.stderr)")
        let expected = try await StoreContents.of(original)
        let copied = try await StoreContents.of(try SQLiteHealthStore(path: copy))
        let heartRates = Self.comparable(expected).quantities.filter { $0.type == .heartRate }
        #expect(Self.comparable(copied).quantities.map(\.metadata) == heartRates.map(\.metadata))
        #expect(copied.series.map(\.beats) == expected.series.map(\.beats))
        #expect(copied.series.map(\.metadata) == expected.series.map(\.metadata))
    }

    /// A line's own "uuid" is the sample's id (not the one its natural key would give): `samples` shows it, and the
    /// same line again is a duplicate, whether it comes alone or next to samples that are named by their key.
    @Test func aLinesOwnUUIDIsKeptAndItsRepeatIsADuplicate() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let named = "5e1f0c2a-7b3d-4c8e-9a61-0d2b3c4e5f60"
        let lines = """
            {"type":"heartRate","start":"2025-03-30T10:00:00Z","value":61,"source":"com.example.app"}
            {"uuid":"\(named)","type":"bodyMass","start":"2025-03-30T07:00:00Z","value":72.5,"unit":"kg","source":"com.example.app"}
            {"type":"heartRate","start":"2025-03-30T10:00:05Z","value":62,"source":"com.example.app"}

            """
        let first = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: lines)
        #expect(
            first.stdout == "3 samples: 3 inserted, 0 duplicate, 0 conflict, 0 replaced, 0 stale\n", "\(first.stderr)")
        let listed = try WearhouseRunner.run(["samples", "--store", store, "--type", "bodyMass", "--format", "json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try WearhouseRunner.json(listed.stdout)["uuid"] as? String == named)
        let again = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: lines)
        #expect(
            again.stdout == "3 samples: 0 inserted, 3 duplicate, 0 conflict, 0 replaced, 0 stale\n", "\(again.stderr)")
        let alone = try WearhouseRunner.run(
            ["import-samples", "--store", store, "-"], stdin: String(lines.split(separator: "\n")[1]) + "\n")
        #expect(
            alone.stdout == "1 samples: 0 inserted, 1 duplicate, 0 conflict, 0 replaced, 0 stale\n", "\(alone.stderr)")
    }

    @Test func csvAndFHIRHoldTheHeartbeatSeriesAndStatsCountThem() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try await fill()
        let csv = try WearhouseRunner.run(["export", "--store", store, "--format", "csv"])
        let rows = csv.stdout.split(separator: "\n")
        #expect(
            rows.first == "uuid,type,start,end,value,unit,source,source_version,device,device_name,subject,metadata")
        // 3 quantity samples, then one row per beat of the two series (4 + 2).
        #expect(rows.count == 1 + 3 + 6)
        #expect(rows.filter { $0.contains(",heartbeatSeries,") && $0.contains(",878.90625,ms,") }.count == 6)
        #expect(rows.filter { $0.contains(#""{""gap"":true}""#) }.count == 1)
        #expect(rows.contains { $0.contains(#""syncVersion"":3"#) })

        let fhir = try WearhouseRunner.run([
            "export", "--store", store, "--format", "fhir", "--type", "heartbeatSeries",
        ])
        let observations = try fhir.stdout.split(separator: "\n").map { try WearhouseRunner.json($0) }
        #expect(observations.count == 2)
        #expect(observations.map { ($0["component"] as? [Any])?.count } == [4, 2])

        let stats = try WearhouseRunner.run([
            "stats", "--store", store, "--type", "heartbeatSeries", "--interval", "1h", "--from",
            "2025-03-30T10:00:00Z", "--to", "2025-03-30T11:00:00Z", "--json",
        ])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(try WearhouseRunner.json(stats.stdout)["count"] as? Double == 2)
    }
}
