import Foundation
import Health
import StoreEngine
import Stores
import TestSupport
import Testing

@testable import WearhouseCLI

/// Through the real binary, on a store mixing every kind of sample (dense series of several streams, rows with
/// client ids, an app's samples, categories, percentages, correlations whose members are left
/// out, heartbeat series, a workout): `export` in csv, ndjson and fhir, and `samples` in csv and json, print what the
/// general writers print of the samples the store's general read gives (``ExportCommand/write(_:of:_:format:to:progress:columns:)``
/// with `columns: false`, in this process), byte for byte, on both engines.
@Suite struct ExportFastPathTests {
    static let base: Int64 = 1_743_292_800_000  // 2025-03-30T00:00:00Z

    /// Fills the store at `url` (SQLite path or PostgreSQL URL).
    static func fill(_ url: String) async throws {
        let store = try openStore(try StoreURL(parsing: url))
        let gateway = Source(identifier: "org.wearhouse.gateway", version: "1.2")
        let strap = Device(
            name: "Polar H10 \"chest\"", manufacturer: "Polar", model: "H10", firmwareVersion: "5.0,1",
            localIdentifier: "A0:9E:1A:00:00:01")
        let watch = Device(name: "PineTime", localIdentifier: "C7:00:00:00:00:02")
        // A strap and a watch at 1 Hz for 3 hours and a phone every 7 s, interleaved (ties between them), in +02:00
        // and UTC, with metadata on one stream: about 23,000 samples.
        var batch = SampleBatch()
        for second in 0..<10_800 {
            let time = base + Int64(second) * 1_000
            batch.append(
                QuantitySample(
                    type: .heartRate, start: Instant(milliseconds: time), end: Instant(milliseconds: time),
                    startOffsetSeconds: 7_200, value: 50 + Double(second % 90) + (second % 3 == 0 ? 0.5 : 0),
                    source: gateway, device: strap, subject: "alice",
                    metadata: [MetadataKey.heartRateSensorLocation: .integer(1), "note": .string("a, \"b\"\nc")]))
            batch.append(
                QuantitySample(
                    type: .heartRate, start: Instant(milliseconds: time), end: Instant(milliseconds: time),
                    value: 60 + Double(second % 70), source: gateway, device: watch, subject: "bob"))
            if second % 7 == 0 {
                batch.append(
                    QuantitySample(
                        type: .heartRate, start: Instant(milliseconds: time), end: Instant(milliseconds: time),
                        value: 30 + 0.97 * Double(second % 100), source: Source(identifier: "org.example.watch")))
            }
        }
        _ = try await store.save(batch, as: .owner)
        // Steps over intervals in +05:30, sleep stages (a category), oxygen saturation (a percentage), body
        // temperature with its site, and odd offsets and values.
        var others: [QuantitySample] = []
        for minute in 0..<600 {
            let time = base + Int64(minute) * 60_000
            others.append(
                QuantitySample(
                    type: .stepCount, start: Instant(milliseconds: time), end: Instant(milliseconds: time + 60_000),
                    startOffsetSeconds: 19_800, value: Double(minute % 120), source: gateway, device: strap))
            others.append(
                QuantitySample(
                    type: .oxygenSaturation, start: Instant(milliseconds: time), end: Instant(milliseconds: time),
                    startOffsetSeconds: 45 * 60 + 5, value: 0.9 + Double(minute % 10) / 100, source: gateway))
            others.append(
                QuantitySample(
                    type: .sleepAnalysis, start: Instant(milliseconds: time),
                    end: Instant(milliseconds: time + 60_000), value: Double(minute % 6), source: gateway))
        }
        others.append(
            QuantitySample(
                type: .bodyTemperature, start: Instant(milliseconds: base), end: Instant(milliseconds: base),
                startOffsetSeconds: -18_000, value: 36.6, source: gateway,
                metadata: [MetadataKey.bodyTemperatureSensorLocation: .integer(6)]))
        _ = try await store.save(others, as: .owner)
        // Rows: samples with client ids (owner), and an app's own samples.
        let rows = (0..<300).map { index in
            QuantitySample(
                type: .heartRate, start: Instant(milliseconds: base + Int64(index) * 1_000),
                end: Instant(milliseconds: base + Int64(index) * 1_000), value: 100 + Double(index % 50),
                source: Source(identifier: "com.example.logger"),
                metadata: [MetadataKey.externalUUID: .string("r-\(index)"), MetadataKey.syncVersion: .number(1)])
        }
        _ = try await store.save(rows, as: .owner)
        let app = "com.example.pulse"
        try await store.setAuthorization(app: app, [TypeAuthorization(type: "heartRate", read: false, share: true)])
        let mine = (0..<200).map { index in
            QuantitySample(
                type: .heartRate, start: Instant(milliseconds: base + Int64(index) * 2_000 + 500),
                end: Instant(milliseconds: base + Int64(index) * 2_000 + 1_500), value: 70,
                source: Source(identifier: app))
        }
        _ = try await store.save(mine, as: .app(app))
        // A blood pressure (its members are left out of the samples), heartbeat series, a workout.
        let pressure = Correlation.bloodPressure(
            systolic: 121, diastolic: 79, at: Instant(milliseconds: base + 5_000), startOffsetSeconds: 7_200,
            source: gateway, device: strap, subject: "alice")
        _ = try await store.save([pressure], as: .owner)
        let beats = (1...4).map { Beat(offsetMilliseconds: Double($0) * 878.90625, rrMilliseconds: 878.90625) }
        _ = try await store.save(
            [
                HeartbeatSeriesSample(
                    start: Instant(milliseconds: base), end: Instant(milliseconds: base + 60_000), beats: beats,
                    source: gateway, device: strap, subject: "alice")
            ], as: .owner)
        _ = try await store.save(
            [
                Workout(
                    activityType: .running, start: Instant(milliseconds: base),
                    end: Instant(milliseconds: base + 600_000),
                    duration: 600, source: gateway)
            ], as: .owner)
    }

    /// What the general writers print for `export --format <format>` of the store at `url`.
    static func generalExport(_ url: String, _ format: ExportCommand.Format) async throws -> String {
        let store = try openStore(try StoreURL(parsing: url), mustExist: true)
        let types =
            HealthTypeCatalog.all.filter { $0.kind == .correlation }
            + HealthTypeCatalog.all.filter { $0.kind == .workout }
            + HealthTypeCatalog.all.filter { $0.isSampleType || $0.kind == .series }
        let collected = SampleLineWriterTests.Collected()
        let output = OutputBuffer { bytes throws(PrivateFile.Failure) in collected.bytes += bytes }
        _ = try await ExportCommand.write(
            types, of: store, SampleQuery(type: .heartRate), format: format, to: output, columns: false)
        return String(decoding: collected.bytes, as: UTF8.self)
    }

    /// What the general writer prints for `samples --type <type> --format <format>` of the store at `url`.
    static func generalSamples(_ url: String, _ type: HealthType, _ format: SamplesCommand.Format) async throws
        -> String
    {
        let store = try openStore(try StoreURL(parsing: url), mustExist: true)
        var query = SampleQuery(type: type, limit: 1_000)
        var text = ""
        var first = true
        while true {
            let page = try await store.samples(query, as: .owner)
            text += SamplesCommand.render(page.samples, format: format, header: first)
            first = false
            guard let next = page.next else { return text }
            query.cursor = next
        }
    }

    static func compare(_ url: String) async throws {
        for format in [ExportCommand.Format.csv, .ndjson, .fhir] {
            let printed = try WearhouseRunner.run(["export", "--store", url, "--format", format.rawValue])
            #expect(printed.status == 0, "\(printed.stderr)")
            let general = try await generalExport(url, format)
            #expect(printed.stdout.count > 2_000_000, "\(format)")
            #expect(printed.stdout == general, "\(format): \(firstDifference(printed.stdout, general))")
        }
        for type in [HealthType.heartRate, .sleepAnalysis, .oxygenSaturation] {
            for format in [SamplesCommand.Format.csv, .json] {
                let printed = try WearhouseRunner.run(
                    ["samples", "--store", url, "--type", type.identifier, "--format", format.rawValue])
                #expect(printed.status == 0, "\(printed.stderr)")
                let general = try await generalSamples(url, type, format)
                #expect(
                    printed.stdout == general,
                    "\(type.identifier) \(format): \(firstDifference(printed.stdout, general))")
            }
        }
    }

    /// The first line where two texts differ, for a readable failure.
    static func firstDifference(_ lhs: String, _ rhs: String) -> String {
        let left = lhs.split(separator: "\n", omittingEmptySubsequences: false)
        let right = rhs.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, (a, b)) in zip(left, right).enumerated() where a != b { return "line \(index + 1): \(a) | \(b)" }
        return "\(left.count) against \(right.count) lines"
    }

    @Test func theBinaryExportsAMixedSQLiteStoreAsTheGeneralWritersDo() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wearhouse-export-fast-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("health.db").path
        try await Self.fill(url)
        try await Self.compare(url)
    }

    @Test func theBinaryExportsAMixedPostgreSQLStoreAsTheGeneralWritersDo() async throws {
        let server = try PostgresServer.shared()
        let conninfo = try server.createDatabase()
        let url = server.url(database: String(conninfo.split(separator: "=").last ?? ""))
        try await Self.fill(url)
        try await Self.compare(url)
    }
}
