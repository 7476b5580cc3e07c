import Health

/// The Open mHealth schemas that quantity and category samples are exported in, and read back from (`export
/// --format ndjson`, `import-samples`): one table for both directions. A type without one here is written in
/// wearhouse's own schema (`wearhouse:<type>:1.0`, its canonical unit). Tests/OpenMHealth/validate_export.py checks
/// an export against the schemas' rules.
struct OpenMHealthSchema: Sendable {
    /// The store's type.
    var type: String
    /// `schema_id.name` and `.version` in the `omh` namespace.
    var name: String
    var version: String
    /// The body's measure (`{"value", "unit"}`) and the unit written there.
    var field: String
    var unit: String
    /// The measure's value per unit of the store's canonical value (100 for a fraction written in %).
    var scale: Double = 1
    /// The schema takes a time interval only (`effective_time_frame.time_interval`): an instant is written in
    /// wearhouse's schema.
    var needsInterval = false

    static let all: [OpenMHealthSchema] = [
        OpenMHealthSchema(
            type: "heartRate", name: "heart-rate", version: "2.0", field: "heart_rate", unit: "beats/min"),
        OpenMHealthSchema(
            type: "stepCount", name: "step-count", version: "3.0", field: "step_count", unit: "steps",
            needsInterval: true),
        OpenMHealthSchema(type: "bodyMass", name: "body-weight", version: "2.0", field: "body_weight", unit: "kg"),
        OpenMHealthSchema(type: "height", name: "body-height", version: "1.0", field: "body_height", unit: "m"),
        OpenMHealthSchema(
            type: "bodyTemperature", name: "body-temperature", version: "3.0", field: "body_temperature", unit: "C"),
        OpenMHealthSchema(
            type: "oxygenSaturation", name: "oxygen-saturation", version: "2.0", field: "oxygen_saturation", unit: "%",
            scale: 100),
        // Asleep stages of sleepAnalysis: the stage stays in the body's `category`, beside the duration.
        OpenMHealthSchema(
            type: "sleepAnalysis", name: "sleep-duration", version: "2.0", field: "sleep_duration", unit: "min",
            needsInterval: true),
    ]

    static func forType(_ identifier: String) -> OpenMHealthSchema? { all.first { $0.type == identifier } }
    static func named(_ name: String) -> OpenMHealthSchema? { all.first { $0.name == name } }

    /// The schema `sample` is written in, nil for wearhouse's own: a sleepAnalysis sample only when asleep (values
    /// 1, 3, 4, 5; in bed and awake are not sleep), a schema that needs an interval only for one.
    static func of(_ sample: QuantitySample) -> OpenMHealthSchema? {
        guard let schema = forType(sample.type.identifier) else { return nil }
        if schema.needsInterval, sample.start == sample.end { return nil }
        if sample.type == .sleepAnalysis, ![1, 3, 4, 5].contains(sample.value) { return nil }
        return schema
    }

    /// The measure's value: the canonical value scaled, or a sleep's minutes.
    func measure(_ sample: QuantitySample) -> Double {
        if type == "sleepAnalysis" { return Double(sample.end.milliseconds - sample.start.milliseconds) / 60_000 }
        return sample.value * scale
    }

    /// The canonical unit for an Open mHealth unit, where the two spell it differently (others, `kg`, `lb`,
    /// `cm`, `in`, are the same in both).
    static func storeUnit(_ unit: String) -> String {
        ["beats/min": "count/min", "steps": "count", "C": "degC", "F": "degF"][unit] ?? unit
    }

    /// HealthKit's body temperature sensor locations (as `bodyTemperatureSensorLocation` metadata holds them)
    /// in `omh:body-temperature`'s `measurement_location` words, where it has one.
    static func temperatureLocation(_ location: MetadataValue?) -> String? {
        guard case .integer(let number) = location else { return nil }
        let words: [Int64: String] = [
            1: "axillary", 3: "tympanic", 4: "finger", 6: "oral", 7: "rectal", 8: "toe", 9: "tympanic",
            10: "temporal artery", 11: "forehead",
        ]
        return words[number]
    }
}
