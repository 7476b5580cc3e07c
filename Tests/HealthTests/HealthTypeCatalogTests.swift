import Foundation
import Health
import Testing

@Suite struct HealthTypeCatalogTests {
    @Test func looksUpHealthKitIdentifiers() throws {
        let heartRate = try #require(HealthTypeCatalog.type("heartRate"))
        #expect(heartRate.canonicalUnit == "count/min")
        #expect(heartRate.aggregation == .discrete)
        #expect(heartRate.kind == .quantity)
        #expect(heartRate.validRange == 1...300)
        #expect(HealthTypeCatalog.type("stepCount")?.aggregation == .cumulative)
        #expect(HealthTypeCatalog.type("heartbeatSeries")?.kind == .series)
        #expect(HealthTypeCatalog.type("HKQuantityTypeIdentifierHeartRate") == nil)
        #expect(HealthTypeCatalog.type("steps") == nil)
    }

    @Test func identifiersAreUnique() {
        let identifiers = HealthTypeCatalog.all.map(\.identifier)
        #expect(Set(identifiers).count == identifiers.count)
    }

    @Test func cumulativeTypesAcceptZeroButNotNegative() {
        for type in HealthTypeCatalog.all where type.aggregation == .cumulative {
            #expect(type.validRange?.contains(0) == true)
            #expect(type.validRange?.contains(-1) == false)
        }
    }

    /// The rows of `docs/healthkit-types.md`: identifier (HealthKit spelling), dimension, aggregation.
    static func referenceRows() throws -> [(identifier: String, dimension: String, aggregation: String)] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        let text = try String(contentsOf: root.appendingPathComponent("docs/healthkit-types.md"), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count == 5, cells[1].hasPrefix("`HK"), cells[1].hasSuffix("`") else { return nil }
            return (String(cells[1].dropFirst().dropLast()), cells[2], cells[3])
        }
    }

    /// `HKQuantityTypeIdentifierBodyMass` → `bodyMass`, `...UVExposure` → `uvExposure` (a leading acronym is
    /// lower-cased whole, as HealthKit's Swift names have it); `HKWorkoutTypeIdentifier` → `workout`.
    static func wearhouseName(_ healthKit: String) -> String {
        for prefix in [
            "HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCharacteristicTypeIdentifier",
            "HKCorrelationTypeIdentifier",
        ] where healthKit.hasPrefix(prefix) {
            let rest = Array(healthKit.dropFirst(prefix.count))
            let capitals = rest.prefix { $0.isUppercase }.count
            let lowered = capitals > 1 && capitals < rest.count ? capitals - 1 : 1
            return String(rest.prefix(lowered)).lowercased() + String(rest.dropFirst(lowered))
        }
        return healthKit == "HKWorkoutTypeIdentifier" ? "workout" : healthKit
    }

    @Test func theCatalogHoldsEveryIdentifierOfTheReferenceTable() throws {
        let rows = try Self.referenceRows()
        // 69 quantity, 7 category, 4 characteristic, 2 correlation types and the workout type.
        #expect(rows.count == 83)
        for row in rows {
            let name = Self.wearhouseName(row.identifier)
            let type = try #require(HealthTypeCatalog.type(name), "\(row.identifier) is not in the catalog")
            switch row.aggregation {
            case "Discrete": #expect(type.aggregation == .discrete && type.kind == .quantity, "\(name)")
            case "Cumulative": #expect(type.aggregation == .cumulative && type.kind == .quantity, "\(name)")
            default: #expect(type.kind.rawValue == row.aggregation, "\(name)")
            }
            // The table's dimension, as the canonical unit's.
            guard type.kind == .quantity else { continue }
            let dimension = try HealthUnit(type.canonicalUnit).dimension
            let expected: HealthUnit.Dimension? =
                switch row.dimension {
                case "Mass": .init(mass: 1)
                case "Length": .init(length: 1)
                case "Energy": .init(length: 2, mass: 1, time: -2)
                case "Time": .init(time: 1)
                case "Volume": .init(length: 3)
                case "Volume/Time": .init(length: 3, time: -1)
                case "Mass/Volume": .init(length: -3, mass: 1)
                case "Pressure": .init(length: -1, mass: 1, time: -2)
                case "Scalar(Count)/Time": .init(time: -1, count: 1)
                case "Temperature", "Basal Body Temperature": .init(temperature: 1)
                case "Conductance": .init(conductance: 1)
                default:
                    row.dimension.contains("Percent")
                        ? .init(percent: 1) : row.dimension.contains("Count") ? .init(count: 1) : nil
                }
            #expect(dimension == expected, "\(name): \(row.dimension)")
            if row.dimension.contains("Percent") { #expect(type.validRange == 0...1, "\(name) is a fraction") }
        }
        let quantities = rows.filter { $0.aggregation == "Discrete" || $0.aggregation == "Cumulative" }
        #expect(quantities.count == 69)
    }

    @Test func theRepositoryCopyOfTheTableIsTheSharedReference() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        let shared = root.appendingPathComponent("../shared/reference/healthkit-types.md").standardized
        // The shared reference sits beside the repository on developers' machines and in CI; a checkout without
        // it has only the copy.
        guard FileManager.default.fileExists(atPath: shared.path) else { return }
        let copy = try String(contentsOf: root.appendingPathComponent("docs/healthkit-types.md"), encoding: .utf8)
        #expect(try String(contentsOf: shared, encoding: .utf8) == copy)
    }

    @Test func theNewerTypesTheGatewayAndItsSensorsNeedAreThere() throws {
        for (identifier, unit) in [
            ("restingHeartRate", "count/min"), ("walkingHeartRateAverage", "count/min"), ("vo2Max", "mL/(kg*min)"),
            ("cyclingSpeed", "m/s"), ("cyclingCadence", "count/min"), ("cyclingPower", "W"), ("runningPower", "W"),
            ("oxygenSaturation", "%"), ("heartRateVariabilitySDNN", "ms"), ("bodyTemperature", "degC"),
            ("bloodGlucose", "mg/dL"), ("electrodermalActivity", "mcS"),
        ] {
            let type = try #require(HealthTypeCatalog.type(identifier))
            #expect(type.canonicalUnit == unit)
        }
    }

    @Test func vitalSignsCarryTheirLOINCCodes() {
        let codes = [
            "bodyMass": "29463-7", "height": "8302-2", "bodyTemperature": "8310-5", "oxygenSaturation": "59408-5",
            "bloodPressureSystolic": "8480-6", "bloodPressureDiastolic": "8462-4", "bloodPressure": "85354-9",
            "bodyMassIndex": "39156-5", "heartRate": "8867-4", "respiratoryRate": "9279-1",
        ]
        for (identifier, code) in codes {
            #expect(HealthTypeCatalog.type(identifier)?.loinc == code, "\(identifier)")
        }
    }

    @Test func categoriesAreNumberedAsHealthKitNumbersThem() throws {
        let sleep = try #require(HealthTypeCatalog.type("sleepAnalysis"))
        #expect(sleep.kind == .category)
        #expect(sleep.canonicalUnit.isEmpty)
        #expect(
            sleep.values.map { "\($0.name)=\($0.value)" } == [
                "inBed=0", "asleepUnspecified=1", "awake=2", "asleepCore=3", "asleepDeep=4", "asleepREM=5",
            ])
        #expect(sleep.value(named: "asleep") == 1)
        #expect(sleep.value(named: "asleepDeep") == 4)
        #expect(sleep.name(of: 5) == "asleepREM")
        #expect(sleep.name(of: 6) == nil)
        let stand = try #require(HealthTypeCatalog.type("appleStandHour"))
        #expect(stand.value(named: "stood") == 0)
        #expect(stand.value(named: "idle") == 1)
        #expect(HealthTypeCatalog.type("menstrualFlow")?.value(named: "unspecified") == 1)
        #expect(HealthTypeCatalog.type("menstrualFlow")?.value(named: "none") == 5)
        #expect(HealthTypeCatalog.type("ovulationTestResult")?.value(named: "positive") == 2)
        #expect(HealthTypeCatalog.type("ovulationTestResult")?.value(named: "estrogenSurge") == 4)
        #expect(HealthTypeCatalog.type("cervicalMucusQuality")?.value(named: "eggWhite") == 5)
        #expect(HealthTypeCatalog.type("sexualActivity")?.values.map(\.value) == [0])
        #expect(HealthTypeCatalog.type("bloodType")?.value(named: "AB-") == 6)
        #expect(HealthTypeCatalog.type("fitzpatrickSkinType")?.value(named: "VI") == 6)
    }

    @Test func onlyQuantitiesAndCategoriesAreSamples() {
        func reason(_ identifier: String, _ value: Double) -> String? {
            guard let type = HealthTypeCatalog.type(identifier) else { return "unknown" }
            return QuantitySample.invalidityReason(start: 0, end: 1_000, value: value, as: type)
        }
        #expect(reason("sleepAnalysis", 4) == nil)
        #expect(reason("sleepAnalysis", 6)?.contains("sleepAnalysis value 6.0 is not one of its values") == true)
        #expect(reason("sleepAnalysis", 1.5) != nil)
        #expect(reason("appleStandHour", -1) != nil)
        #expect(reason("dateOfBirth", 0)?.contains("characteristic") == true)
        #expect(reason("bloodPressure", 120)?.contains("correlation") == true)
        #expect(reason("workout", 1)?.contains("workout") == true)
        #expect(reason("bodyFatPercentage", 0.22) == nil)
        #expect(reason("bodyFatPercentage", 22) != nil)
    }
}
