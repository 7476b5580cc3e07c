internal import Foundation
internal import GATT
internal import Health

/// The health devices' measurements (`docs/gatt-health-devices.md`): scales, body composition analysers, blood
/// pressure cuffs, thermometers and pulse oximeters. Each measurement is a handful of samples at one instant,
/// in HealthKit's units:
///
/// - Weight Measurement: `bodyMass` (kg), `bodyMassIndex`, `height` (m).
/// - Body Composition Measurement: `bodyFatPercentage` (a fraction 0...1), `leanBodyMass` (its fat free mass),
///   `bodyMass` when it sends a weight, `height`, and `basalEnergyBurned` (its basal metabolism per day, in kcal,
///   over the 24 hours before the measurement).
/// - Blood Pressure Measurement: a `bloodPressure` correlation (systolic and diastolic in mmHg) with the mean
///   arterial pressure and the status bits in its metadata, and `heartRate` for the pulse rate.
/// - Temperature Measurement: `bodyTemperature` (°C), with the temperature type (the measurement's, else the
///   Temperature Type characteristic read at connect) as `bodyTemperatureSensorLocation` metadata.
/// - PLX Spot-check and Continuous Measurement: `oxygenSaturation` and `peripheralPerfusionIndex` (fractions
///   0...1, as HealthKit stores them) and `heartRate`.
///
/// Intermediate cuff pressures and intermediate temperatures are not results: they are counted as ignored.
/// What cannot be stored (an unsuccessful measurement, a special value such as NaN, a status that says the
/// reading is invalid, unavailable or demonstration data) is counted in ``Counters/unusable``.
///
/// **Time.** A measurement with a time stamp is placed at that time, read in the sensor context's time zone
/// (the device's clock is local wall time), so that records a scale stored while nobody was connected keep
/// their own times and a record sent twice is the same sample. The receive time is used instead, with the
/// stamp kept in `deviceTimeStamp` and its distance from the receive time in `deviceClockOffset`, when the
/// stamp is incomplete (a field unknown or out of range), before 2000, or more than
/// ``Settings/deviceClockTolerance`` in the future, or when the device says its clock is not set. A device whose
/// Current Time was off by more than that tolerance when it connected has its stamps corrected
/// (``SensorContext/deviceClock``, ``DeviceClockCorrection``).
///
/// **Who.** A multi-user device's user index selects the subject through ``SensorContext/subjectsByUserIndex``;
/// an index without a mapping (255 is "unknown user") keeps the sensor's subject. The index is kept as
/// `userIndex` metadata either way.
extension SampleBuilder {
    /// The characteristics this extension turns into samples (results and intermediates).
    static let healthDeviceMeasurements: Set<BluetoothUUID> = [
        .weightMeasurement, .bodyCompositionMeasurement, .bloodPressureMeasurement, .intermediateCuffPressure,
        .temperatureMeasurement, .intermediateTemperature, .plxSpotCheckMeasurement, .plxContinuousMeasurement,
    ]

    /// Builds the samples of a health device's measurement; `false` when `characteristic` is not one.
    mutating func addHealthDevice(
        _ characteristic: BluetoothUUID, _ value: [UInt8], at: Instant, into output: inout Output
    ) throws(DecodeError) -> Bool {
        switch characteristic {
        case .weightMeasurement:
            weight(try WeightMeasurement(decoding: value), at: at, into: &output)
        case .bodyCompositionMeasurement:
            bodyComposition(try BodyCompositionMeasurement(decoding: value), at: at, into: &output)
        case .bloodPressureMeasurement:
            bloodPressure(try BloodPressureMeasurement(decoding: value), at: at, into: &output)
        case .temperatureMeasurement:
            temperature(try TemperatureMeasurement(decoding: value), at: at, into: &output)
        case .plxSpotCheckMeasurement:
            let spot = try PLXSpotCheckMeasurement(decoding: value)
            let time: (instant: Instant, metadata: [String: MetadataValue]) =
                spot.deviceClockNotSet ? (at, [:]) : measurementTime(spot.timeStamp, receivedAt: at)
            var metadata = time.metadata
            if spot.deviceClockNotSet, let stamp = spot.timeStamp {
                metadata[MetadataKey.deviceTimeStamp] = .string(stamp.description)
            }
            oximetry(
                spo2: spot.spo2, pulseRate: spot.pulseRate, perfusion: spot.pulseAmplitudeIndex,
                status: spot.measurementStatus, at: time.instant, metadata: metadata, into: &output)
        case .plxContinuousMeasurement:
            let continuous = try PLXContinuousMeasurement(decoding: value)
            oximetry(
                spo2: continuous.normal.spo2, pulseRate: continuous.normal.pulseRate,
                perfusion: continuous.pulseAmplitudeIndex, status: continuous.measurementStatus, at: at, metadata: [:],
                into: &output)
        case .intermediateCuffPressure:
            _ = try IntermediateCuffPressure(decoding: value)
            counters.ignored += 1
        case .intermediateTemperature:
            _ = try IntermediateTemperature(decoding: value)
            counters.ignored += 1
        default:
            return false
        }
        return true
    }

    // MARK: Time and subject

    /// Where a measurement with `stamp` goes on the timeline, and the metadata that says so when the stamp was
    /// not used as it is (see the extension's comment, and ``DeviceClockCorrection`` for a device clock found off
    /// at connect).
    func measurementTime(_ stamp: DateTime?, receivedAt: Instant) -> (
        instant: Instant, metadata: [String: MetadataValue]
    ) {
        guard let stamp else { return (receivedAt, [:]) }
        var metadata: [String: MetadataValue] = [:]
        guard stamp.isComplete, stamp.year >= 2000, var instant = localInstant(stamp) else {
            metadata[MetadataKey.deviceTimeStamp] = .string(stamp.description)
            return (receivedAt, metadata)
        }
        if let clock = context.deviceClock, let corrected = clock.corrected(instant) {
            metadata[MetadataKey.deviceTimeStamp] = .string(stamp.description)
            metadata[MetadataKey.deviceClockOffset] = .quantity(
                Double(clock.offset.wholeMilliseconds) / 1000, unit: "s")
            instant = corrected
        }
        let ahead = instant.milliseconds - receivedAt.milliseconds
        if ahead > settings.deviceClockTolerance.wholeMilliseconds {
            metadata[MetadataKey.deviceTimeStamp] = .string(stamp.description)
            metadata[MetadataKey.deviceClockOffset] = .quantity(Double(ahead) / 1000, unit: "s")
            return (receivedAt, metadata)
        }
        return (instant, metadata)
    }

    /// The instant a device's local wall-clock time names in the context's time zone.
    func localInstant(_ stamp: DateTime) -> Instant? {
        DeviceClockCorrection.instant(stamp, in: context.timeZone)
    }

    /// The subject of a reading with `userID`, and the metadata that records the index.
    func subject(forUser userID: UInt8?, metadata: inout [String: MetadataValue]) -> String? {
        guard let userID else { return context.subject }
        if userID != UserIndex.unknown { metadata[MetadataKey.userIndex] = .integer(Int64(userID)) }
        return context.subjectsByUserIndex[userID] ?? context.subject
    }

    /// The context's own tags (the serial number) for a health device's samples.
    var deviceMetadata: [String: MetadataValue] {
        var metadata: [String: MetadataValue] = [:]
        if let serial = context.device.serialNumber { metadata[MetadataKey.deviceSerialNumber] = .string(serial) }
        return metadata
    }

    // MARK: Builders

    mutating func weight(_ measurement: WeightMeasurement, at received: Instant, into output: inout Output) {
        guard let kilograms = measurement.kilograms else {
            counters.unusable += 1
            return
        }
        let time = measurementTime(measurement.timeStamp, receivedAt: received)
        var metadata = deviceMetadata.merging(time.metadata) { $1 }
        let subject = subject(forUser: measurement.userID, metadata: &metadata)
        appendOne(.bodyMass, at: time.instant, kilograms, subject, metadata, &output)
        if let bmi = measurement.bodyMassIndex {
            appendOne(.bodyMassIndex, at: time.instant, bmi, subject, metadata, &output)
        }
        if let meters = measurement.meters, meters > 0 {
            appendOne(.height, at: time.instant, meters, subject, metadata, &output)
        }
    }

    mutating func bodyComposition(
        _ measurement: BodyCompositionMeasurement, at received: Instant, into output: inout Output
    ) {
        guard let fraction = measurement.bodyFatFraction else {
            counters.unusable += 1
            return
        }
        let time = measurementTime(measurement.timeStamp, receivedAt: received)
        var metadata = deviceMetadata.merging(time.metadata) { $1 }
        let subject = subject(forUser: measurement.userID, metadata: &metadata)
        let at = time.instant
        appendOne(.bodyFatPercentage, at: at, fraction, subject, metadata, &output)
        if let lean = measurement.fatFreeMassKilograms {
            appendOne(.leanBodyMass, at: at, lean, subject, metadata, &output)
        }
        if let mass = measurement.weightKilograms { appendOne(.bodyMass, at: at, mass, subject, metadata, &output) }
        if let meters = measurement.heightMeters, meters > 0 {
            appendOne(.height, at: at, meters, subject, metadata, &output)
        }
        if let kilojoules = measurement.basalMetabolism, kilojoules > 0 {
            let day = Instant(milliseconds: at.milliseconds - 86_400_000)
            appendOne(
                .basalEnergyBurned, from: day, to: at, Double(kilojoules) / 4.184, subject, metadata, &output)
        }
    }

    mutating func bloodPressure(
        _ measurement: BloodPressureMeasurement, at received: Instant, into output: inout Output
    ) {
        guard let systolic = measurement.millimetersOfMercury(measurement.systolic),
            let diastolic = measurement.millimetersOfMercury(measurement.diastolic)
        else {
            counters.unusable += 1
            return
        }
        let time = measurementTime(measurement.timeStamp, receivedAt: received)
        var metadata = deviceMetadata.merging(time.metadata) { $1 }
        let subject = subject(forUser: measurement.userID, metadata: &metadata)
        var correlationMetadata = metadata
        if let map = measurement.millimetersOfMercury(measurement.meanArterialPressure) {
            correlationMetadata[MetadataKey.meanArterialPressure] = .quantity(map, unit: "mmHg")
        }
        if let status = measurement.status {
            correlationMetadata["bodyMovementDetected"] = .bool(status.bodyMovementDetected)
            correlationMetadata["cuffTooLoose"] = .bool(status.cuffTooLoose)
            correlationMetadata["irregularPulseDetected"] = .bool(status.irregularPulseDetected)
            correlationMetadata["pulseRateRange"] = .string(status.pulseRateRange.name)
            correlationMetadata["improperMeasurementPosition"] = .bool(status.improperMeasurementPosition)
        }
        output.correlations.append(
            Correlation.bloodPressure(
                systolic: systolic, diastolic: diastolic, at: time.instant,
                startOffsetSeconds: offset(at: time.instant),
                source: context.source, device: context.device, subject: subject, metadata: correlationMetadata))
        if let pulse = measurement.pulseRate?.value, pulse > 0 {
            appendOne(.heartRate, at: time.instant, pulse, subject, metadata, &output)
        }
    }

    mutating func temperature(_ measurement: TemperatureMeasurement, at received: Instant, into output: inout Output) {
        guard let celsius = measurement.celsius else {
            counters.unusable += 1
            return
        }
        let time = measurementTime(measurement.timeStamp, receivedAt: received)
        var metadata = deviceMetadata.merging(time.metadata) { $1 }
        if let type = measurement.temperatureType, !type.isReserved {
            metadata[MetadataKey.bodyTemperatureSensorLocation] = .integer(Int64(type.rawValue))
        } else if let type = context.temperatureType {
            metadata[MetadataKey.bodyTemperatureSensorLocation] = .integer(Int64(type))
        }
        appendOne(.bodyTemperature, at: time.instant, celsius, context.subject, metadata, &output)
    }

    mutating func oximetry(
        spo2: SFloat, pulseRate: SFloat, perfusion: SFloat?, status: PLXMeasurementStatus?, at: Instant,
        metadata extra: [String: MetadataValue], into output: inout Output
    ) {
        if let status, status.invalid || status.measurementUnavailable || status.isDemonstrationOrTest {
            counters.unusable += 1
            return
        }
        let metadata = deviceMetadata.merging(extra) { $1 }
        var stored = false
        if let percent = spo2.value, percent > 0 {
            appendOne(.oxygenSaturation, at: at, percent / 100, context.subject, metadata, &output)
            stored = true
        }
        if let pulse = pulseRate.value, pulse > 0 {
            appendOne(.heartRate, at: at, pulse, context.subject, metadata, &output)
            stored = true
        }
        if let index = perfusion?.value, index > 0 {
            appendOne(.peripheralPerfusionIndex, at: at, index / 100, context.subject, metadata, &output)
        }
        if !stored { counters.unusable += 1 }
    }

    /// One sample at an instant (or over `start...end`) as a stream of its own: a health device's samples are a
    /// few a day, each with the subject and metadata of its measurement.
    mutating func appendOne(
        _ type: HealthType, at: Instant, _ value: Double, _ subject: String?, _ metadata: [String: MetadataValue],
        _ output: inout Output
    ) {
        appendOne(type, from: at, to: at, value, subject, metadata, &output)
    }

    mutating func appendOne(
        _ type: HealthType, from start: Instant, to end: Instant, _ value: Double, _ subject: String?,
        _ metadata: [String: MetadataValue], _ output: inout Output
    ) {
        var stream = QuantitySeries(
            type: type, startOffsetSeconds: offset(at: start), source: context.source, device: context.device,
            subject: subject, metadata: metadata)
        stream.append(start: start.milliseconds, end: end.milliseconds, value: value)
        output.append(stream)
    }
}
