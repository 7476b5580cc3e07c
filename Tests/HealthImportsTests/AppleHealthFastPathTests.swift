import Foundation
import Health
import HealthImports
import Support
import TestSupport
import Testing

/// The fast path of top-level records (Sources/HealthImports/AppleHealthFastPath.swift) against the general path:
/// a generated export, and the same export mutated thousands of ways (odd numbers, units, times, device texts,
/// metadata, missing and renamed attributes, combining marks), read both ways, give the same batches, the same
/// correlations, workouts and characteristics, the same counts and the same reasons for what was not imported
/// (or the same error).
@Suite struct AppleHealthFastPathTests {
    /// Everything a reader made of an export.
    struct Outcome: Equatable {
        var quantities: [QuantitySeries] = []
        var heartbeats: [HeartbeatSeriesSample] = []
        var correlations: [Correlation] = []
        var workouts: [Workout] = []
        var characteristics: [String] = []
        var read: [String: Int] = [:]
        var converted: [String: Int] = [:]
        var notImported: [String: String] = [:]
        var skippedByType: [String: String] = [:]
        var creationDates = 0
        var routeLocations = 0
        var error: String?
    }

    static func read(_ path: String, fast: Bool) -> (Outcome, fastRecords: Int) {
        var outcome = Outcome()
        var fastRecords = 0
        do {
            let export = try AppleHealthExport(path: path, format: .xml)
            let reader = try AppleHealthReader(export: export, defaultSource: "org.example.default", progress: nil)
            reader.usesFastPath = fast
            while let batch = try reader.next() {
                outcome.quantities += batch.quantities
                outcome.heartbeats += batch.heartbeats
            }
            outcome.correlations = reader.correlations
            outcome.workouts = reader.workouts
            outcome.characteristics = reader.characteristics.map { "\($0.type.identifier)=\($0.value)" }
            outcome.read = reader.read
            outcome.converted = reader.converted
            outcome.notImported = reader.notImported.mapValues { "\($0.count) \($0.reason) \($0.line)" }
            outcome.skippedByType = reader.skippedByType.mapValues { "\($0.count) \($0.reason) \($0.line)" }
            outcome.creationDates = reader.creationDates
            outcome.routeLocations = reader.routeLocations
            fastRecords = reader.fastRecords
        } catch {
            outcome.error = "\(error)"
        }
        return (outcome, fastRecords)
    }

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("apple-fast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aGeneratedExportReadsTheSameBothWays() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let written = try AppleHealthExportGenerator.write(days: 12, seed: 7, to: folder)
        let path = folder.appendingPathComponent("export.xml").path
        let (fast, fastRecords) = Self.read(path, fast: true)
        let (general, none) = Self.read(path, fast: false)
        #expect(fast.error == nil, "\(fast.error ?? "")")
        #expect(fast == general)
        #expect(none == 0)
        // Every top-level record took the fast path but those with beats.
        let beats = written.read["heartbeatSeries"] ?? 0
        // The records inside correlations (two readings of two a day, three meals of five nutrients) are read by
        // the general path.
        let members = 12 * (2 * 2 + 3 * 5)
        #expect(fastRecords == written.records - beats - members)
        // What the generator says the import finds.
        #expect(fast.read == written.read)
        #expect(fast.notImported.filter { $0.key.hasPrefix("Record ") }.count == written.notInCatalog.count)
        #expect(fast.routeLocations == written.routeLocations)
    }

    /// Values to put in an attribute: odd numbers, units, times, device texts, category values, long and
    /// non-ASCII text.
    static let oddValues: [String] = [
        "", "-", "+5", ".5", "5.", "1e3", "1E-2", "0x1p3", "inf", "-inf", "nan", " 5", "5 ", "-0", "-0.0", "00012",
        "1.7976931348623157e309", "123456789012345678901234567890", "0.1234567890123456789", "٣", "5\u{301}",
        "72", "250", "301", "-3", "0", "1", "0.97", "1.5", "count/min", "count", "kg", "lb", "Kg", "g", "mg",
        "mL/min·kg",
        "mL/(kg*min)", "degF", "degC", "%", "km", "m", "cm", "ft", "Cal", "kcal", "kJ", "ms", "s", "min",
        "mmol&lt;180.1558800000541&gt;/L", "mg/dL", "count/s", "furlong",
        "HKCategoryValueSleepAnalysisAwake", "HKCategoryValueSleepAnalysisAsleep", "HKCategoryValueNotApplicable",
        "HKCategoryValueAppleStandHourIdle", "2", "7", "HKQuantityTypeIdentifierHeartRate",
        "HKQuantityTypeIdentifierStepCount", "HKCategoryTypeIdentifierSleepAnalysis", "HKQuantityTypeIdentifierFoo",
        "HKCorrelationTypeIdentifierBloodPressure", "HKCharacteristicTypeIdentifierBloodType", "heartRate",
        "2024-02-30 10:00:00 +0000", "2024-01-01 24:00:00 +0000", "2024-01-01 10:00:60 +0000",
        "2024-01-01 10:00:61 +0000", "2024-01-01 10:00:00 +2400", "2024-01-01 10:00:00+0000",
        "2024-01-01T10:00:00Z", "9999-12-31 23:59:59 -2359", "0001-01-01 00:00:00 +2359", "2019-01-01 00:00:00 +0000",
        "2030-01-01 00:00:00 +0000", "2019-01-09 00:00:00 +0100",
        "&lt;&lt;HKDevice: 0x1&gt;\u{301}, name:X, model:Y&gt;", "&lt;&lt;HKDevice:\u{301} 0x1&gt;, name:X&gt;",
        "&lt;&lt;HKDevice: 0x2&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:9.1&gt;",
        "&lt;&lt;HKDevice: 0x3&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:9.1&gt;",
        "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,1, software:9.1&gt;",
        "&lt;&lt;HKDevice: 0x4&gt;", "&lt;&lt;HKDevice: 0x5", "no fields", "name:" + String(repeating: "x", count: 300),
        "Ann’s Apple Watch", "Ann's Apple Watch", "Ann’s iPhone", "Health", String(repeating: "é", count: 200),
        "e\u{301}", "\u{301}", "Ann’s Apple Watch\u{301}",
    ]

    /// Metadata entries to add to a record.
    static let oddEntries: [(String, String)] = [
        ("HKWasUserEntered", "1"), ("HKWasUserEntered", "2"), ("HKMetadataKeySyncVersion", "-1"),
        ("HKMetadataKeySyncVersion", "3"), ("HKExternalUUID", ""), ("HKExternalUUID", "abc"), ("", "x"),
        (String(repeating: "k", count: 300), "v"), ("HKTimeZone", "Europe/London"), ("HKTimeZone", ""),
        ("HKMetadataKeyHeartRateMotionContext", "1"), ("HKMetadataKeyHeartRateMotionContext", "x"),
        ("HKAverageMETs", "7.6 kcal/hr·kg"), ("HKWeatherTemperature", "nan degF"), ("custom", "1e400 m"),
        ("HKFoodMeal", String(repeating: "m", count: 5_000)), ("HK", "2"), ("HKx", "3"), ("HKMetadataKey", "4"),
    ]

    /// `text` with one top-level record changed by `random`.
    static func mutate(_ lines: [Substring], _ random: inout SplitMix64) -> String {
        var lines = lines
        let records = lines.indices.filter { lines[$0].hasPrefix(" <Record ") }
        guard !records.isEmpty else { return lines.joined(separator: "\n") }
        for _ in 0..<(1 + Int(random.next() % 3)) {
            let index = random.pick(records)
            var line = String(lines[index])
            let values = Self.attributeValues(line)
            switch random.next() % 6 {
            case 0, 1:  // an odd value for an attribute
                if let value = values.randomElement(using: &random) {
                    let odd = random.pick(oddValues)
                    line.replaceSubrange(value.value, with: odd)
                }
            case 2:  // one character of a value changed
                if let value = values.randomElement(using: &random), !value.value.isEmpty {
                    let characters = Array("0123456789.-+ eE:é\u{301}xXkgm%/")
                    let offset = Int(random.next() % UInt64(line[value.value].count))
                    let at = line.index(value.value.lowerBound, offsetBy: offset)
                    line.replaceSubrange(
                        at...at, with: String(random.pick(characters)))
                }
            case 3:  // an attribute left out
                if let value = values.randomElement(using: &random) { line.removeSubrange(value.whole) }
            case 4:  // an attribute renamed
                if let value = values.randomElement(using: &random) {
                    line.replaceSubrange(
                        value.name,
                        with: ["Unit", "value2", "startdate", "device", "type"].randomElement(using: &random) ?? "x")
                }
            default:  // a metadata entry added
                let (key, value) = random.pick(oddEntries)
                let entry = "  <MetadataEntry key=\"\(key)\" value=\"\(value)\"/>"
                if line.hasSuffix("/>") {
                    line = String(line.dropLast(2)) + ">\n" + entry + "\n </Record>"
                } else {
                    line += "\n" + entry
                }
            }
            lines[index] = Substring(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The export's lines with one top-level record in eight kept (every other element whole), so that a
    /// mutated export reads quickly.
    static func thinned(_ lines: [Substring]) -> [Substring] {
        var kept: [Substring] = []
        var records = 0
        var dropping = false
        for line in lines {
            if dropping {
                if line == " </Record>" { dropping = false }
                continue
            }
            if line.hasPrefix(" <Record ") {
                records += 1
                if records % 8 != 0 {
                    dropping = !line.hasSuffix("/>")
                    continue
                }
            }
            kept.append(line)
        }
        return kept
    }

    /// Which part of two outcomes differs (for a failure's message, instead of both whole).
    static func difference(_ one: Outcome, _ other: Outcome) -> String {
        if one.error != other.error { return "error: \(one.error ?? "none") / \(other.error ?? "none")" }
        if one.quantities != other.quantities {
            let index =
                zip(one.quantities, other.quantities).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(one.quantities.count, other.quantities.count)
            let first = one.quantities.indices.contains(index) ? "\(one.quantities[index])" : "none"
            let second = other.quantities.indices.contains(index) ? "\(other.quantities[index])" : "none"
            return "series \(index): \(first) / \(second)"
        }
        if one.read != other.read { return "read: \(one.read) / \(other.read)" }
        if one.converted != other.converted { return "converted: \(one.converted) / \(other.converted)" }
        if one.notImported != other.notImported { return "not imported: \(one.notImported) / \(other.notImported)" }
        if one.skippedByType != other.skippedByType {
            return "skipped by type: \(one.skippedByType) / \(other.skippedByType)"
        }
        if one.creationDates != other.creationDates {
            return "creation dates: \(one.creationDates) / \(other.creationDates)"
        }
        return "heartbeats, correlations, workouts, characteristics or routes"
    }

    struct AttributeValue {
        var whole: Range<String.Index>
        var name: Range<String.Index>
        var value: Range<String.Index>
    }

    /// Every `name="value"` of a line (values hold no `"`).
    static func attributeValues(_ line: String) -> [AttributeValue] {
        var found: [AttributeValue] = []
        var index = line.startIndex
        while let equals = line[index...].range(of: "=\"") {
            var nameStart = equals.lowerBound
            while nameStart > line.startIndex, line[line.index(before: nameStart)].isLetter {
                nameStart = line.index(before: nameStart)
            }
            guard let close = line[equals.upperBound...].firstIndex(of: "\"") else { break }
            let whole = line.index(before: nameStart)..<line.index(after: close)
            found.append(
                AttributeValue(whole: whole, name: nameStart..<equals.lowerBound, value: equals.upperBound..<close))
            index = line.index(after: close)
        }
        return found
    }

    @Test(arguments: [1, 2, 3, 4])
    func mutatedExportsReadTheSameBothWays(seed: UInt64) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try AppleHealthExportGenerator.write(days: 1, seed: seed, to: folder, routes: false)
        let original = try String(contentsOf: folder.appendingPathComponent("export.xml"), encoding: .utf8)
        let lines = Self.thinned(original.split(separator: "\n", omittingEmptySubsequences: false))
        var random = SplitMix64(seed: seed)
        var differing = 0
        var sawFast = 0
        for round in 0..<50 {
            let path = folder.appendingPathComponent("mutated-\(round).xml").path
            try Self.mutate(lines, &random).write(toFile: path, atomically: false, encoding: .utf8)
            let (fast, fastRecords) = Self.read(path, fast: true)
            let (general, _) = Self.read(path, fast: false)
            if fast != general { differing += 1 }
            let same = fast == general
            #expect(same, "round \(round) of seed \(seed): \(path): \(Self.difference(fast, general))")
            if fastRecords > 0 { sawFast += 1 }
            if fast == general { try? FileManager.default.removeItem(atPath: path) }
        }
        #expect(differing == 0)
        #expect(sawFast > 40)
    }
}
