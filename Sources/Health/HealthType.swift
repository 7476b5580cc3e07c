/// A kind of health data, identified by HealthKit's name without the `HK...TypeIdentifier` prefix, first letter
/// lower-cased (`HKQuantityTypeIdentifierBodyMass` → `bodyMass`; a leading acronym whole, `uvExposure`;
/// `HKWorkoutTypeIdentifier` → `workout`).
///
/// The catalog is data, not code paths: a store keeps identifiers as text, so a new type needs a catalog entry
/// (``HealthTypeCatalog``) and no schema change. Two types are equal when their identifiers are.
public struct HealthType: Hashable, Sendable, CustomStringConvertible {
    /// HealthKit's kinds of object.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// A number in a unit (`HKQuantitySample`).
        case quantity
        /// An integer from the type's enumeration (`HKCategorySample`): stored as a sample whose value is the
        /// integer, with no unit.
        case category
        /// A fact about the person (`HKCharacteristicType`): set by the owner, read by apps, never a sample.
        case characteristic
        /// Samples taken together (`HKCorrelation`: blood pressure, food).
        case correlation
        /// An exercise session (`HKWorkout`).
        case workout
        /// Beat-to-beat series (`HKHeartbeatSeriesSample`).
        case series
        /// A workout's routes (`HKSeriesType.workoutRoute()`): no samples of their own (they are kept with their
        /// workout), a type so that reading and writing where someone went is granted apart from the workouts.
        case route
    }

    /// How samples of a type combine.
    public enum Aggregation: String, Hashable, Sendable {
        /// Amounts over intervals that add up (steps, distance, energy); merged across sources by priority.
        case cumulative
        /// Readings at a moment or over an interval (heart rate, speed); averaged, never priority-merged.
        case discrete
        /// Beat-to-beat series (RR intervals); one sample holds many beats.
        case series
        /// Category samples: time in each value and count per value (``CategoryStatistics``).
        case category
        /// Characteristics, correlations and workouts: not aggregated as samples (printed `none`).
        case notAggregated = "none"
    }

    /// One value of a category's or a characteristic's enumeration, numbered as HealthKit numbers it.
    public struct EnumeratedValue: Hashable, Sendable {
        /// HealthKit's case name (`asleepDeep`).
        public let name: String
        public let value: Int
        /// Other names HealthKit has for the same value (`asleep` for `asleepUnspecified`), accepted at the edges.
        public let aliases: [String]

        public init(_ name: String, _ value: Int, aliases: [String] = []) {
            self.name = name
            self.value = value
            self.aliases = aliases
        }
    }

    /// `heartRate`, `stepCount`, ...
    public let identifier: String
    public let kind: Kind
    /// The unit values are stored in, as a HealthKit unit string; empty for kinds without a unit (category,
    /// characteristic, correlation, workout).
    public let canonicalUnit: String
    public let aggregation: Aggregation
    /// The values a sample may hold, in the canonical unit; `nil` means any finite value.
    public let validRange: ClosedRange<Double>?
    /// LOINC code for FHIR export, when one applies.
    public let loinc: String?
    /// The canonical unit's UCUM code for FHIR export, when the unit has one.
    public let ucum: String?
    /// The enumeration of a category or a characteristic; empty otherwise.
    public let values: [EnumeratedValue]

    public init(
        identifier: String, kind: Kind = .quantity, canonicalUnit: String, aggregation: Aggregation,
        validRange: ClosedRange<Double>?, loinc: String? = nil, ucum: String? = nil, values: [EnumeratedValue] = []
    ) {
        self.identifier = identifier
        self.kind = aggregation == .series ? .series : kind
        self.canonicalUnit = canonicalUnit
        self.aggregation = aggregation
        self.validRange = validRange
        self.loinc = loinc
        self.ucum = ucum
        self.values = values
    }

    public var description: String { identifier }

    /// Whether samples of this type can be saved as ``QuantitySample``s (quantities and categories).
    public var isSampleType: Bool { kind == .quantity || kind == .category }

    /// The integer of the enumeration value called `name` (or one of its aliases), or `nil`.
    public func value(named name: String) -> Int? {
        values.first { $0.name == name || $0.aliases.contains(name) }?.value
    }

    /// The name of the enumeration value `value`, or `nil` when the enumeration has no such value.
    public func name(of value: Int) -> String? {
        values.first { $0.value == value }?.name
    }

    public static func == (lhs: HealthType, rhs: HealthType) -> Bool {
        lhs.identifier == rhs.identifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
    }

    public static let heartRate = HealthType(
        identifier: "heartRate", canonicalUnit: "count/min", aggregation: .discrete, validRange: 1...300,
        loinc: "8867-4", ucum: "/min")
    /// RR intervals in ms. The range is heart rate's (1-300 count/min) as intervals: 200 ms to 60 s. Values a BLE
    /// strap can send outside it (0, or up to 64 s) are artifacts: a writer drops them and marks the next beat as
    /// preceded by a gap.
    public static let heartbeatSeries = HealthType(
        identifier: "heartbeatSeries", canonicalUnit: "ms", aggregation: .series, validRange: 200...60_000,
        ucum: "ms")
    public static let heartRateVariabilitySDNN = HealthType(
        identifier: "heartRateVariabilitySDNN", canonicalUnit: "ms", aggregation: .discrete, validRange: 0...10_000,
        loinc: "80404-7", ucum: "ms")
    public static let stepCount = HealthType(
        identifier: "stepCount", canonicalUnit: "count", aggregation: .cumulative,
        validRange: 0...Double.greatestFiniteMagnitude, loinc: "55423-8", ucum: "{steps}")
    public static let distanceWalkingRunning = HealthType(
        identifier: "distanceWalkingRunning", canonicalUnit: "m", aggregation: .cumulative,
        validRange: 0...Double.greatestFiniteMagnitude, loinc: "41953-1", ucum: "m")
    public static let runningSpeed = HealthType(
        identifier: "runningSpeed", canonicalUnit: "m/s", aggregation: .discrete, validRange: 0...1_000, ucum: "m/s")
    public static let runningStrideLength = HealthType(
        identifier: "runningStrideLength", canonicalUnit: "m", aggregation: .discrete, validRange: 0...1_000,
        ucum: "m")
    public static let stepCadence = HealthType(
        identifier: "stepCadence", canonicalUnit: "count/min", aggregation: .discrete, validRange: 0...10_000,
        ucum: "/min")
    public static let activeEnergyBurned = HealthType(
        identifier: "activeEnergyBurned", canonicalUnit: "kcal", aggregation: .cumulative,
        validRange: 0...Double.greatestFiniteMagnitude, loinc: "41981-2", ucum: "kcal")
    public static let sleepAnalysis = HealthTypeCatalog.entry("sleepAnalysis")
    public static let appleStandHour = HealthTypeCatalog.entry("appleStandHour")
    public static let bodyMass = HealthTypeCatalog.entry("bodyMass")
    public static let height = HealthTypeCatalog.entry("height")
    public static let bodyMassIndex = HealthTypeCatalog.entry("bodyMassIndex")
    public static let bodyFatPercentage = HealthTypeCatalog.entry("bodyFatPercentage")
    public static let leanBodyMass = HealthTypeCatalog.entry("leanBodyMass")
    public static let basalEnergyBurned = HealthTypeCatalog.entry("basalEnergyBurned")
    public static let bodyTemperature = HealthTypeCatalog.entry("bodyTemperature")
    public static let oxygenSaturation = HealthTypeCatalog.entry("oxygenSaturation")
    public static let peripheralPerfusionIndex = HealthTypeCatalog.entry("peripheralPerfusionIndex")
    public static let bloodGlucose = HealthTypeCatalog.entry("bloodGlucose")
    public static let dateOfBirth = HealthTypeCatalog.entry("dateOfBirth")
    public static let biologicalSex = HealthTypeCatalog.entry("biologicalSex")
    public static let bloodType = HealthTypeCatalog.entry("bloodType")
    public static let fitzpatrickSkinType = HealthTypeCatalog.entry("fitzpatrickSkinType")
    public static let cyclingPower = HealthTypeCatalog.entry("cyclingPower")
    public static let cyclingCadence = HealthTypeCatalog.entry("cyclingCadence")
    public static let cyclingSpeed = HealthTypeCatalog.entry("cyclingSpeed")
    public static let distanceCycling = HealthTypeCatalog.entry("distanceCycling")
}

/// The types wearhouse knows: HealthKit's iOS 8-9 identifiers (`docs/healthkit-types.md`, checked by
/// `Tests/HealthTests/HealthTypeCatalogTests.swift`) and the newer ones the gateway writes. Look types up by identifier (a dictionary: O(1) on the gateway's path); unknown identifiers are an
/// error at the edges.
public enum HealthTypeCatalog {
    public static let all: [HealthType] =
        [
            .heartRate, .heartbeatSeries, .heartRateVariabilitySDNN, .stepCount, .distanceWalkingRunning,
            .runningSpeed, .runningStrideLength, .stepCadence, .activeEnergyBurned,
        ] + table

    private static let byIdentifier: [String: HealthType] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.identifier, $0) })

    /// The type named `identifier` (HealthKit spelling, e.g. `heartRate`), or `nil`.
    public static func type(_ identifier: String) -> HealthType? {
        byIdentifier[identifier]
    }

    /// The types of one kind, in catalog order.
    public static func types(of kind: HealthType.Kind) -> [HealthType] {
        all.filter { $0.kind == kind }
    }

    /// A table entry by identifier, for the named constants of ``HealthType``; the identifiers are literals of
    /// the table below, which the catalog tests check.
    static func entry(_ identifier: String) -> HealthType {
        table.first { $0.identifier == identifier }
            ?? HealthType(identifier: identifier, canonicalUnit: "", aggregation: .notAggregated, validRange: nil)
    }

    private static let any = 0...Double.greatestFiniteMagnitude

    private static func quantity(
        _ identifier: String, _ unit: String, _ aggregation: HealthType.Aggregation, _ range: ClosedRange<Double>,
        loinc: String? = nil, ucum: String?
    ) -> HealthType {
        HealthType(
            identifier: identifier, canonicalUnit: unit, aggregation: aggregation, validRange: range, loinc: loinc,
            ucum: ucum)
    }

    /// A dietary mass, in grams, summed.
    private static func dietary(_ identifier: String) -> HealthType {
        quantity(identifier, "g", .cumulative, any, ucum: "g")
    }

    private static func category(_ identifier: String, _ values: [HealthType.EnumeratedValue]) -> HealthType {
        HealthType(
            identifier: identifier, kind: .category, canonicalUnit: "", aggregation: .category,
            validRange: Double(values.map(\.value).min() ?? 0)...Double(values.map(\.value).max() ?? 0),
            values: values)
    }

    private static func characteristic(
        _ identifier: String, _ values: [HealthType.EnumeratedValue], loinc: String? = nil
    ) -> HealthType {
        HealthType(
            identifier: identifier, kind: .characteristic, canonicalUnit: "", aggregation: .notAggregated,
            validRange: nil, loinc: loinc, values: values)
    }

    private typealias V = HealthType.EnumeratedValue

    /// HealthKit's `HKCategoryValue.notApplicable`, the one value of categories that carry only metadata.
    private static let notApplicable = [V("notApplicable", 0)]

    // Ranges are what a body or a device can produce, wide enough for any real measurement; percentages are
    // fractions 0-1 in `%`, as HealthKit keeps them (a body-fat sample of 0.22 is 22 %).
    private static let table: [HealthType] = [
        // Body measurements.
        quantity("bodyMassIndex", "count", .discrete, 0...500, loinc: "39156-5", ucum: "kg/m2"),
        quantity("bodyFatPercentage", "%", .discrete, 0...1, loinc: "41982-0", ucum: "%"),
        quantity("height", "m", .discrete, 0...5, loinc: "8302-2", ucum: "m"),
        quantity("bodyMass", "kg", .discrete, 0...1_000, loinc: "29463-7", ucum: "kg"),
        quantity("leanBodyMass", "kg", .discrete, 0...1_000, ucum: "kg"),
        // Fitness.
        quantity("distanceCycling", "m", .cumulative, any, ucum: "m"),
        quantity("basalEnergyBurned", "kcal", .cumulative, any, ucum: "kcal"),
        quantity("flightsClimbed", "count", .cumulative, any, ucum: "{flights}"),
        quantity("nikeFuel", "count", .cumulative, any, ucum: "1"),
        quantity("appleExerciseTime", "min", .cumulative, any, ucum: "min"),
        // Vital signs.
        quantity("bodyTemperature", "degC", .discrete, 10...50, loinc: "8310-5", ucum: "Cel"),
        quantity("basalBodyTemperature", "degC", .discrete, 10...50, ucum: "Cel"),
        quantity("bloodPressureSystolic", "mmHg", .discrete, 0...400, loinc: "8480-6", ucum: "mm[Hg]"),
        quantity("bloodPressureDiastolic", "mmHg", .discrete, 0...400, loinc: "8462-4", ucum: "mm[Hg]"),
        quantity("respiratoryRate", "count/min", .discrete, 0...300, loinc: "9279-1", ucum: "/min"),
        // Results.
        quantity("oxygenSaturation", "%", .discrete, 0...1, loinc: "59408-5", ucum: "%"),
        quantity("peripheralPerfusionIndex", "%", .discrete, 0...1, ucum: "%"),
        quantity("bloodGlucose", "mg/dL", .discrete, 0...10_000, loinc: "41653-7", ucum: "mg/dL"),
        quantity("numberOfTimesFallen", "count", .cumulative, any, ucum: "1"),
        quantity("electrodermalActivity", "mcS", .discrete, 0...1_000_000, ucum: "uS"),
        quantity("inhalerUsage", "count", .cumulative, any, ucum: "1"),
        quantity("bloodAlcoholContent", "%", .discrete, 0...1, ucum: "%"),
        quantity("forcedVitalCapacity", "L", .discrete, 0...20, loinc: "19870-5", ucum: "L"),
        quantity("forcedExpiratoryVolume1", "L", .discrete, 0...20, loinc: "20150-9", ucum: "L"),
        quantity("peakExpiratoryFlowRate", "L/min", .discrete, 0...2_000, loinc: "19935-6", ucum: "L/min"),
        // Nutrition.
        dietary("dietaryFatTotal"), dietary("dietaryFatPolyunsaturated"), dietary("dietaryFatMonounsaturated"),
        dietary("dietaryFatSaturated"), dietary("dietaryCholesterol"), dietary("dietarySodium"),
        dietary("dietaryCarbohydrates"), dietary("dietaryFiber"), dietary("dietarySugar"),
        quantity("dietaryEnergyConsumed", "kcal", .cumulative, any, loinc: "9052-2", ucum: "kcal"),
        dietary("dietaryProtein"), dietary("dietaryVitaminA"), dietary("dietaryVitaminB6"),
        dietary("dietaryVitaminB12"), dietary("dietaryVitaminC"), dietary("dietaryVitaminD"),
        dietary("dietaryVitaminE"), dietary("dietaryVitaminK"), dietary("dietaryCalcium"), dietary("dietaryIron"),
        dietary("dietaryThiamin"), dietary("dietaryRiboflavin"), dietary("dietaryNiacin"), dietary("dietaryFolate"),
        dietary("dietaryBiotin"), dietary("dietaryPantothenicAcid"), dietary("dietaryPhosphorus"),
        dietary("dietaryIodine"), dietary("dietaryMagnesium"), dietary("dietaryZinc"), dietary("dietarySelenium"),
        dietary("dietaryCopper"), dietary("dietaryManganese"), dietary("dietaryChromium"),
        dietary("dietaryMolybdenum"), dietary("dietaryChloride"), dietary("dietaryPotassium"),
        dietary("dietaryCaffeine"),
        quantity("dietaryWater", "mL", .cumulative, any, ucum: "mL"),
        quantity("uvExposure", "count", .discrete, 0...100, ucum: "1"),
        // Newer HealthKit types the gateway and its sensors write.
        quantity("restingHeartRate", "count/min", .discrete, 1...300, loinc: "40443-4", ucum: "/min"),
        quantity("walkingHeartRateAverage", "count/min", .discrete, 1...300, ucum: "/min"),
        quantity("vo2Max", "mL/(kg*min)", .discrete, 0...200, ucum: "mL/(kg.min)"),
        quantity("cyclingSpeed", "m/s", .discrete, 0...1_000, ucum: "m/s"),
        quantity("cyclingCadence", "count/min", .discrete, 0...1_000, ucum: "/min"),
        quantity("cyclingPower", "W", .discrete, 0...10_000, ucum: "W"),
        quantity("runningPower", "W", .discrete, 0...10_000, ucum: "W"),
        // The activity rings' daily goals (HealthKit keeps them on HKActivitySummary, not as samples): one sample a
        // local day, with the day's achieved value in its metadata (`achieved`), as the Apple Health import writes
        // them (docs/apple-health-import.md).
        quantity("activeEnergyBurnedGoal", "kcal", .discrete, 0...100_000, ucum: "kcal"),
        quantity("appleExerciseTimeGoal", "min", .discrete, 0...1_440, ucum: "min"),
        quantity("appleStandHoursGoal", "count", .discrete, 0...24, ucum: "1"),
        quantity("appleMoveTimeGoal", "min", .discrete, 0...1_440, ucum: "min"),
        // Categories, numbered as HealthKit's HKCategoryValue... enumerations.
        category(
            "sleepAnalysis",
            [
                V("inBed", 0), V("asleepUnspecified", 1, aliases: ["asleep"]), V("awake", 2), V("asleepCore", 3),
                V("asleepDeep", 4), V("asleepREM", 5),
            ]),
        category("appleStandHour", [V("stood", 0), V("idle", 1)]),
        category(
            "cervicalMucusQuality", [V("dry", 1), V("sticky", 2), V("creamy", 3), V("watery", 4), V("eggWhite", 5)]),
        category(
            "ovulationTestResult",
            [
                V("negative", 1), V("luteinizingHormoneSurge", 2, aliases: ["positive"]), V("indeterminate", 3),
                V("estrogenSurge", 4),
            ]),
        category(
            "menstrualFlow", [V("unspecified", 1), V("light", 2), V("medium", 3), V("heavy", 4), V("none", 5)]),
        category("intermenstrualBleeding", notApplicable),
        category("sexualActivity", notApplicable),
        // Characteristics, numbered as HKBiologicalSex, HKBloodType and HKFitzpatrickSkinType; a date of birth is
        // a calendar date.
        characteristic(
            "biologicalSex", [V("notSet", 0), V("female", 1), V("male", 2), V("other", 3)], loinc: "76689-9"),
        characteristic(
            "bloodType",
            [
                V("notSet", 0), V("aPositive", 1, aliases: ["A+"]), V("aNegative", 2, aliases: ["A-"]),
                V("bPositive", 3, aliases: ["B+"]), V("bNegative", 4, aliases: ["B-"]),
                V("abPositive", 5, aliases: ["AB+"]), V("abNegative", 6, aliases: ["AB-"]),
                V("oPositive", 7, aliases: ["O+"]), V("oNegative", 8, aliases: ["O-"]),
            ], loinc: "882-1"),
        characteristic("dateOfBirth", [], loinc: "21112-8"),
        characteristic(
            "fitzpatrickSkinType",
            [V("notSet", 0), V("I", 1), V("II", 2), V("III", 3), V("IV", 4), V("V", 5), V("VI", 6)]),
        // Correlations and workouts: their members are samples of the types above.
        HealthType(
            identifier: "bloodPressure", kind: .correlation, canonicalUnit: "", aggregation: .notAggregated,
            validRange: nil, loinc: "85354-9"),
        HealthType(
            identifier: "food", kind: .correlation, canonicalUnit: "", aggregation: .notAggregated, validRange: nil),
        HealthType(
            identifier: "workout", kind: .workout, canonicalUnit: "", aggregation: .notAggregated, validRange: nil),
        HealthType(
            identifier: "workoutRoute", kind: .route, canonicalUnit: "", aggregation: .notAggregated,
            validRange: nil),
    ]
}
