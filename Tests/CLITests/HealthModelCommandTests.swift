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
        #expect(kinds == ["quantity", "category", "characteristic", "correlation", "workout", "series"])
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
}
