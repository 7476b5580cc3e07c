public import GATT
internal import Health

/// A blood glucose meter's records (`docs/gatt-glucose.md`): each Glucose Measurement becomes one `bloodGlucose`
/// sample in mg/dL (kg/L is a decimal shift; mol/L converts through glucose's molar mass, exactly as
/// ``HealthUnit`` does for `mmol<180.15588000005408>/L`), at its user-facing time (base time plus time offset)
/// read in the sensor context's zone as the other health devices' stamps are (``measurementTime(_:receivedAt:)``).
///
/// Metadata: `glucoseSequenceNumber` (the meter's record number, which tells the gateway where the next transfer
/// starts: `GatewayService+Glucose.swift`), `glucoseSampleType` and `glucoseSampleLocation` (the names in ``GlucoseConcentration``),
/// `glucoseSensorStatus` (the names of the annunciation bits set, comma-separated), and from the Glucose
/// Measurement Context with the same sequence number: `bloodGlucoseMealTime` (HealthKit's 1 preprandial,
/// 2 postprandial), `glucoseMeal` (every meal value by name: fasting, casual and bedtime have no HealthKit
/// number), `glucoseTester`, `glucoseHealth`, `glucoseCarbohydrate` (g), `glucoseExerciseDuration` (s),
/// `glucoseExerciseIntensity` (%), `glucoseMedication` (mg or mL, with `glucoseMedicationType`) and `hba1c` (%).
///
/// **Pairing a record with its context.** A measurement whose flags say a context follows is held until that
/// context arrives (same sequence number), the next measurement arrives, or the meter indicates the Record Access
/// Control Point response that ends the transfer; in the last two cases it is stored without context. A record
/// held when the link drops is dropped too: it is not stored, so the next session, which asks for the records after
/// the highest sequence number stored, gets it again, with its context.
///
/// Not stored (counted in ``Counters/unusable``): no concentration or a special value, a control solution, and a
/// result whose sensor status says the meter could not measure it (bits 1-10; a low battery or a time fault alone
/// does not discard the number). Such a record still counts as handled for ``highestGlucoseSequence``; after a
/// restart it is asked for again (the store does not hold it) and counted again, which changes nothing stored.
extension SampleBuilder {
    /// What the builder keeps about a meter between notifications.
    struct GlucoseState: Sendable {
        /// A measurement waiting for its context, with its receive instant.
        var pending: (measurement: GlucoseMeasurement, at: Instant)?
        /// The highest sequence number this builder turned into a sample (or counted as unusable).
        var highestSequence: UInt16?
        /// The last Record Access Control Point value the meter indicated.
        var lastControlPoint: RecordAccessControlPoint?
    }

    /// The characteristics this extension handles.
    static let glucoseCharacteristics: Set<BluetoothUUID> = [
        .glucoseMeasurement, .glucoseMeasurementContext, .recordAccessControlPoint,
    ]

    /// The highest sequence number built into a sample by this builder (this service's life).
    public var highestGlucoseSequence: UInt16? { glucose.highestSequence }

    /// The last Record Access Control Point indication (a response code or a number of records).
    public var lastGlucoseControlPoint: RecordAccessControlPoint? { glucose.lastControlPoint }

    /// A new session with the meter: a record still waiting for its context from the last one is dropped (it
    /// was never stored, so it is asked for again).
    public mutating func glucoseSessionStarted() {
        if glucose.pending != nil { counters.ignored += 1 }
        glucose.pending = nil
    }

    /// Builds the samples of a glucose meter's value.
    mutating func addGlucose(
        _ characteristic: BluetoothUUID, _ value: [UInt8], at: Instant, into output: inout Output
    ) throws(DecodeError) {
        switch characteristic {
        case .glucoseMeasurement:
            let measurement = try GlucoseMeasurement(decoding: value)
            flushPendingGlucose(into: &output)
            if measurement.contextFollows {
                glucose.pending = (measurement, at)
            } else {
                glucoseSample(measurement, context: nil, at: at, into: &output)
            }
        case .glucoseMeasurementContext:
            let context = try GlucoseMeasurementContext(decoding: value)
            guard let pending = glucose.pending, pending.measurement.sequenceNumber == context.sequenceNumber else {
                counters.ignored += 1
                return
            }
            glucose.pending = nil
            glucoseSample(pending.measurement, context: context, at: pending.at, into: &output)
        default:
            glucose.lastControlPoint = try RecordAccessControlPoint(decoding: value)
            flushPendingGlucose(into: &output)
            counters.ignored += 1
        }
    }

    private mutating func flushPendingGlucose(into output: inout Output) {
        guard let pending = glucose.pending else { return }
        glucose.pending = nil
        glucoseSample(pending.measurement, context: nil, at: pending.at, into: &output)
    }

    /// mmol/L of glucose, with the molar mass HealthKit uses (180.15588000005408 g/mol), and mg/dL.
    static let glucoseMillimolar = try? HealthUnit("mmol<180.15588000005408>/L")
    static let glucoseMilligrams = try? HealthUnit("mg/dL")

    /// mmol/L of glucose in mg/dL, exactly as ``HealthUnit`` converts.
    static func milligramsPerDeciliter(millimolesPerLiter value: Double) -> Double? {
        guard let from = glucoseMillimolar, let to = glucoseMilligrams else { return nil }
        return try? from.convert(value, to: to)
    }

    mutating func glucoseSample(
        _ measurement: GlucoseMeasurement, context entered: GlucoseMeasurementContext?, at received: Instant,
        into output: inout Output
    ) {
        let sequence = measurement.sequenceNumber
        glucose.highestSequence = max(glucose.highestSequence ?? sequence, sequence)
        let milligrams =
            measurement.milligramsPerDeciliter
            ?? measurement.millimolesPerLiter.flatMap { Self.milligramsPerDeciliter(millimolesPerLiter: $0) }
        guard let milligrams, milligrams > 0, let concentration = measurement.concentration,
            !concentration.isControlSolution, measurement.sensorStatus?.resultUnreliable != true
        else {
            counters.unusable += 1
            return
        }
        let stamp = measurement.userFacingTime ?? measurement.baseTime
        let time = measurementTime(stamp, receivedAt: received)
        var metadata = deviceMetadata.merging(time.metadata) { $1 }
        metadata["glucoseSequenceNumber"] = .integer(Int64(sequence))
        metadata["glucoseSampleType"] = .string(concentration.typeName)
        metadata["glucoseSampleLocation"] = .string(concentration.sampleLocationName)
        if let status = measurement.sensorStatus, status.rawValue != 0 {
            metadata["glucoseSensorStatus"] = .string(status.names.joined(separator: ","))
        }
        if let entered { Self.addContext(entered, to: &metadata) }
        appendOne(.bloodGlucose, at: time.instant, milligrams, context.subject, metadata, &output)
    }

    static func addContext(_ context: GlucoseMeasurementContext, to metadata: inout [String: MetadataValue]) {
        if let meal = context.meal, let name = context.mealName {
            metadata["glucoseMeal"] = .string(name)
            if meal == 1 || meal == 2 { metadata["bloodGlucoseMealTime"] = .integer(Int64(meal)) }
        }
        if let tester = context.testerName, tester != "not_available" { metadata["glucoseTester"] = .string(tester) }
        if let health = context.healthName, health != "not_available" { metadata["glucoseHealth"] = .string(health) }
        if let carbohydrate = context.carbohydrate, let kilograms = carbohydrate.kilograms.value {
            metadata["glucoseCarbohydrate"] = .quantity(kilograms * 1000, unit: "g")
            metadata["glucoseCarbohydrateType"] = .string(carbohydrate.name)
        }
        if let exercise = context.exercise {
            metadata["glucoseExerciseDuration"] = .quantity(Double(exercise.durationSeconds), unit: "s")
            metadata["glucoseExerciseIntensity"] = .quantity(Double(exercise.intensityPercent), unit: "%")
        }
        if let medication = context.medication, let amount = medication.amount.value {
            metadata["glucoseMedication"] =
                context.medicationUnits == .kilograms
                ? .quantity(amount * 1_000_000, unit: "mg") : .quantity(amount * 1000, unit: "mL")
            metadata["glucoseMedicationType"] = .string(medication.name)
        }
        if let hba1c = context.hba1c?.value { metadata["hba1c"] = .quantity(hba1c, unit: "%") }
    }
}
