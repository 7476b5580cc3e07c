/// A kind of health data, identified by HealthKit's name without the `HKQuantityTypeIdentifier` prefix.
///
/// The catalog is data, not code paths: a store keeps identifiers as text, so a new type needs a catalog entry
/// and no schema change.
public struct HealthType: Hashable, Sendable, CustomStringConvertible {
    /// How samples of a type combine.
    public enum Aggregation: String, Hashable, Sendable {
        /// Amounts over intervals that add up (steps, distance, energy); merged across sources by priority.
        case cumulative
        /// Readings at a moment or over an interval (heart rate, speed); averaged, never priority-merged.
        case discrete
        /// Beat-to-beat series (RR intervals); one sample holds many beats.
        case series
    }

    /// `heartRate`, `stepCount`, ...
    public let identifier: String
    /// The unit values are stored in, as a HealthKit unit string.
    public let canonicalUnit: String
    public let aggregation: Aggregation
    /// The values a sample may hold, in the canonical unit; `nil` means any finite value.
    public let validRange: ClosedRange<Double>?
    /// LOINC code for FHIR export, when one applies.
    public let loinc: String?

    public init(
        identifier: String, canonicalUnit: String, aggregation: Aggregation, validRange: ClosedRange<Double>?,
        loinc: String? = nil
    ) {
        self.identifier = identifier
        self.canonicalUnit = canonicalUnit
        self.aggregation = aggregation
        self.validRange = validRange
        self.loinc = loinc
    }

    public var description: String { identifier }

    public static let heartRate = HealthType(
        identifier: "heartRate", canonicalUnit: "count/min", aggregation: .discrete, validRange: 1...300,
        loinc: "8867-4")
    /// RR intervals in ms. The range is heart rate's (1-300 count/min) as intervals: 200 ms to 60 s. Values a BLE
    /// strap can send outside it (0, or up to 64 s) are artifacts: a writer drops them and marks the next beat as
    /// preceded by a gap.
    public static let heartbeatSeries = HealthType(
        identifier: "heartbeatSeries", canonicalUnit: "ms", aggregation: .series, validRange: 200...60_000)
    public static let heartRateVariabilitySDNN = HealthType(
        identifier: "heartRateVariabilitySDNN", canonicalUnit: "ms", aggregation: .discrete, validRange: 0...10_000,
        loinc: "80404-7")
    public static let stepCount = HealthType(
        identifier: "stepCount", canonicalUnit: "count", aggregation: .cumulative,
        validRange: 0...Double.greatestFiniteMagnitude,
        loinc: "55423-8")
    public static let distanceWalkingRunning = HealthType(
        identifier: "distanceWalkingRunning", canonicalUnit: "m", aggregation: .cumulative,
        validRange: 0...Double.greatestFiniteMagnitude, loinc: "41953-1")
    public static let runningSpeed = HealthType(
        identifier: "runningSpeed", canonicalUnit: "m/s", aggregation: .discrete, validRange: 0...1_000)
    public static let runningStrideLength = HealthType(
        identifier: "runningStrideLength", canonicalUnit: "m", aggregation: .discrete, validRange: 0...1_000)
    public static let stepCadence = HealthType(
        identifier: "stepCadence", canonicalUnit: "count/min", aggregation: .discrete, validRange: 0...10_000)
    public static let activeEnergyBurned = HealthType(
        identifier: "activeEnergyBurned", canonicalUnit: "kcal", aggregation: .cumulative,
        validRange: 0...Double.greatestFiniteMagnitude, loinc: "41981-2")
}

/// The types wearhouse knows. Look types up by identifier; unknown identifiers are an error at the edges.
public enum HealthTypeCatalog {
    public static let all: [HealthType] = [
        .heartRate, .heartbeatSeries, .heartRateVariabilitySDNN, .stepCount, .distanceWalkingRunning,
        .runningSpeed, .runningStrideLength, .stepCadence, .activeEnergyBurned,
    ]

    private static let byIdentifier: [String: HealthType] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.identifier, $0) })

    /// The type named `identifier` (HealthKit spelling, e.g. `heartRate`), or `nil`.
    public static func type(_ identifier: String) -> HealthType? {
        byIdentifier[identifier]
    }
}
