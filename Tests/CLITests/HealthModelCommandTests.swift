import Foundation
import Testing

/// HealthKit's data model through the real binary: the catalog, category samples, characteristics.
@Suite struct HealthModelCommandTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "wearhouse-model-\(UUID().uuidString)")
    var store: String { directory.appendingPathComponent("health.db").path }

    @Test func typesJSONListsEveryKindWithUnitsAndCategoryValues() throws {
        let result = try WearhouseRunner.run(["types", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        var byIdentifier: [String: [String: Any]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let object = try WearhouseRunner.json(String(line))
            byIdentifier[try #require(object["identifier"] as? String)] = object
        }
        #expect(byIdentifier.count >= 90)
        let kinds = Set(byIdentifier.values.compactMap { $0["kind"] as? String })
        #expect(kinds == ["quantity", "category", "characteristic", "correlation", "workout", "series", "route"])
        let bodyMass = try #require(byIdentifier["bodyMass"])
        #expect(bodyMass["unit"] as? String == "kg")
        #expect(bodyMass["aggregation"] as? String == "discrete")
        #expect(bodyMass["dimension"] as? String == "mass")
        #expect(bodyMass["loinc"] as? String == "29463-7")
        let temperature = try #require(byIdentifier["bodyTemperature"])
        #expect(temperature["unit"] as? String == "degC")
        #expect(temperature["ucum"] as? String == "Cel")
        let sleep = try #require(byIdentifier["sleepAnalysis"])
        #expect(sleep["kind"] as? String == "category")
        #expect(sleep["unit"] is NSNull)
        #expect(sleep["aggregation"] as? String == "category")
        let values = try #require(sleep["values"] as? [[String: Any]])
        #expect(values.compactMap { $0["name"] as? String }.prefix(3) == ["inBed", "asleepUnspecified", "awake"])
        #expect(values.compactMap { $0["value"] as? Int } == [0, 1, 2, 3, 4, 5])
        #expect(byIdentifier["dateOfBirth"]?["kind"] as? String == "characteristic")
        #expect(byIdentifier["bloodPressure"]?["kind"] as? String == "correlation")
        #expect(byIdentifier["workout"]?["kind"] as? String == "workout")
        #expect(byIdentifier["heartbeatSeries"]?["kind"] as? String == "series")
        // The identifiers of HealthKit's reference table, all there (the catalog test parses the table itself).
        for identifier in ["uvExposure", "dietaryWater", "appleStandHour", "fitzpatrickSkinType", "food", "vo2Max"] {
            #expect(byIdentifier[identifier] != nil, "\(identifier)")
        }
    }

    static let night = """
        {"type":"sleepAnalysis","start":"2025-03-29T22:00:00Z","end":"2025-03-29T23:00:00Z","value":"inBed","source":"com.example.sleep"}
        {"type":"sleepAnalysis","start":"2025-03-29T23:00:00Z","end":"2025-03-30T01:00:00Z","value":"asleepDeep","source":"com.example.sleep"}
        {"type":"sleepAnalysis","start":"2025-03-30T01:00:00Z","end":"2025-03-30T02:30:00Z","value":5,"source":"com.example.sleep"}
        {"type":"appleStandHour","start":"2025-03-30T10:00:00Z","end":"2025-03-30T11:00:00Z","value":"idle","source":"com.example.watch"}

        """

    @Test func categorySamplesGoInByNameAndComeOutNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let imported = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: Self.night)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.hasPrefix("4 samples: 4 inserted"))
        let table = try WearhouseRunner.run(["samples", "--type", "sleepAnalysis", "--store", store])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("inBed"))
        #expect(table.stdout.contains("asleepDeep"))
        #expect(table.stdout.contains("asleepREM"))
        let json = try WearhouseRunner.run([
            "samples", "--type", "appleStandHour", "--format", "json", "--store", store,
        ])
        let stand = try WearhouseRunner.json(json.stdout.trimmingCharacters(in: .newlines))
        #expect(stand["value"] as? Int == 1)
        #expect(stand["value_name"] as? String == "idle")
        #expect(stand["unit"] is NSNull)

        // Time in each value per night (days in UTC): 1 h in bed and 1 h deep before midnight, 1 h deep and 1.5 h
        // REM after.
        let stats = try WearhouseRunner.run([
            "stats", "--type", "sleepAnalysis", "--interval", "1d", "--from", "2025-03-29", "--to", "2025-03-31",
            "--json", "--store", store,
        ])
        #expect(stats.status == 0, "\(stats.stderr)")
        let days = try stats.stdout.split(separator: "\n").map { try WearhouseRunner.json(String($0)) }
        #expect(days.count == 2)
        func hours(_ day: [String: Any], _ name: String) -> Double? {
            (day["values"] as? [[String: Any]])?.first { $0["name"] as? String == name }?["hours"] as? Double
        }
        #expect(hours(days[0], "inBed") == 1)
        #expect(hours(days[0], "asleepDeep") == 1)
        #expect(hours(days[1], "asleepDeep") == 1)
        #expect(hours(days[1], "asleepREM") == 1.5)
        #expect(days[1]["count"] as? Int == 2)
        let text = try WearhouseRunner.run([
            "stats", "--type", "sleepAnalysis", "--interval", "1d", "--from", "2025-03-29", "--to", "2025-03-31",
            "--store", store,
        ])
        #expect(text.stdout.contains("asleepDeep (h)"))
        #expect(text.stdout.contains("1.50"))
        let wrong = try WearhouseRunner.run([
            "stats", "--type", "sleepAnalysis", "--interval", "1d", "--statistic", "avg", "--store", store,
        ])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("sleepAnalysis is a category"))

        // Export and import again: the values survive (CSV keeps its columns, NDJSON names the value).
        let export = try WearhouseRunner.run([
            "export", "--type", "sleepAnalysis", "--format", "ndjson", "--store", store,
        ])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("\"category\":{\"value\":4,\"name\":\"asleepDeep\"}"))
        let csv = try WearhouseRunner.run(["export", "--type", "sleepAnalysis", "--format", "csv", "--store", store])
        #expect(csv.stdout.split(separator: "\n").count == 4)
        let copy = directory.appendingPathComponent("copy.db").path
        let reimported = try WearhouseRunner.run(["import-samples", "--store", copy, "-"], stdin: export.stdout)
        #expect(reimported.status == 0, "\(reimported.stderr)")
        let again = try WearhouseRunner.run(["samples", "--type", "sleepAnalysis", "--format", "json", "--store", copy])
        #expect(again.stdout.split(separator: "\n").count == 3)

        // Delete takes category samples like any other.
        let delete = try WearhouseRunner.run([
            "delete", "--type", "sleepAnalysis", "--from", "2025-03-30T01:00:00Z", "--to", "2025-03-30T03:00:00Z",
            "--yes", "--store", store,
        ])
        #expect(delete.status == 0, "\(delete.stderr)")
        let left = try WearhouseRunner.run(["samples", "--type", "sleepAnalysis", "--format", "json", "--store", store])
        #expect(left.stdout.split(separator: "\n").count == 2)
    }

    @Test(arguments: [
        (
            #"{"type":"sleepAnalysis","start":"2025-03-30T01:00:00Z","value":"asleepDeeply"}"#,
            "sleepAnalysis has no value 'asleepDeeply'; it takes inBed (0), asleepUnspecified (1)"
        ),
        (#"{"type":"sleepAnalysis","start":"2025-03-30T01:00:00Z","value":6}"#, "sleepAnalysis has no value 6.0"),
        (
            #"{"type":"sleepAnalysis","start":"2025-03-30T01:00:00Z","value":1,"unit":"count"}"#,
            "sleepAnalysis is a category and has no unit"
        ),
        (
            #"{"type":"dateOfBirth","start":"2025-03-30T01:00:00Z","value":1}"#,
            "dateOfBirth is a characteristic type, which import-samples does not take"
        ),
    ])
    func badCategoryLinesAreRefusedNamingTypeAndValue(line: String, message: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try WearhouseRunner.run(["import-samples", "--store", store, "-"], stdin: line + "\n")
        #expect(result.status == 65)
        #expect(result.stderr.contains("stdin:1: " + message), "\(result.stderr)")
    }

    @Test func meSetsShowsAndUnsetsCharacteristics() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let set = try WearhouseRunner.run(["me", "set", "dateOfBirth", "1990-02-02", "--store", store])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "dateOfBirth 1990-02-02\n")
        #expect(
            try WearhouseRunner.run(["me", "set", "bloodType", "AB+", "--store", store]).stdout
                == "bloodType abPositive\n")
        #expect(
            try WearhouseRunner.run(["me", "set", "biologicalSex", "male", "--subject", "bob", "--store", store]).status
                == 0)
        let shown = try WearhouseRunner.run(["me", "--json", "--time-zone", "Europe/Berlin", "--store", store])
        let me = try WearhouseRunner.json(shown.stdout.trimmingCharacters(in: .newlines))
        #expect(me["dateOfBirth"] as? String == "1990-02-02")
        #expect(me["bloodType"] as? String == "abPositive")
        #expect(me["biologicalSex"] == nil)
        let age = try #require(me["age"] as? Int)
        #expect(age >= 36)
        let text = try WearhouseRunner.run(["me", "--store", store])
        #expect(text.stdout.contains("dateOfBirth  1990-02-02"))
        #expect(text.stdout.contains("age          \(age)") || text.stdout.contains("age          \(age + 1)"))
        let bob = try WearhouseRunner.run(["me", "--subject", "bob", "--json", "--store", store])
        #expect(
            try WearhouseRunner.json(bob.stdout.trimmingCharacters(in: .newlines))["biologicalSex"] as? String == "male"
        )
        #expect(try WearhouseRunner.run(["me", "unset", "bloodType", "--store", store]).stdout == "bloodType unset\n")
        let after = try WearhouseRunner.run(["me", "--json", "--store", store])
        #expect(try WearhouseRunner.json(after.stdout.trimmingCharacters(in: .newlines))["bloodType"] == nil)

        let unknown = try WearhouseRunner.run(["me", "set", "eyeColour", "blue", "--store", store])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown characteristic 'eyeColour'; the characteristics are biologicalSex"))
        let bad = try WearhouseRunner.run(["me", "set", "dateOfBirth", "1990-13-01", "--store", store])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("dateOfBirth cannot be '1990-13-01'; it takes a date YYYY-MM-DD"))
        let notSamples = try WearhouseRunner.run(["samples", "--type", "dateOfBirth", "--store", store])
        #expect(notSamples.status == 64)
        #expect(
            notSamples.stderr.contains("dateOfBirth is a characteristic type, not one of samples (see 'wearhouse me')"))
    }
}
