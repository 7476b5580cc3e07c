internal import Foundation
internal import GATT
internal import Health

/// Bike trainers, power meters, treadmills and rowers (`docs/gatt-fitness-machines.md`): Cycling Power
/// Measurement and the Fitness Machine data characteristics, in HealthKit's types and units.
///
/// - Cycling Power Measurement: `cyclingPower` (W) per notification (a negative power, a motor driving the
///   pedals, is not stored: counted in ``Counters/unusable``); `cyclingCadence` from two consecutive crank
///   blocks (revolutions and event times taken modulo 2^16; no new crank event, no cadence). Unless the same
///   sensor sends Indoor Bike Data (which then has the machine's own totals): the wheel revolutions times
///   ``FitnessMachineState/wheelCircumference`` as `distanceCycling` deltas and `cyclingSpeed`, and the
///   accumulated energy (kJ, wrapping at 2^16) as `activeEnergyBurned` deltas in kcal.
/// - Indoor Bike Data: `cyclingSpeed`, `distanceCycling` deltas of its total distance, `activeEnergyBurned` deltas
///   of its total energy; `cyclingPower` and `cyclingCadence` too unless the sensor sends Cycling Power
///   Measurement (one source for each, never both: known from the characteristics subscribed to, else from the
///   first value seen).
/// - Treadmill Data: `runningSpeed` and `distanceWalkingRunning` deltas, `activeEnergyBurned` deltas; the
///   inclination (there is no HealthKit type for it) and the elevation gain go into the workout's metadata.
/// - Rower Data: `activeEnergyBurned` deltas; its distance counts in the workout's total only (HealthKit's
///   rowing distance is not in the catalog).
///
/// Totals are cumulative counters (``CumulativeCounter``): the first value is a base, a decrease is a reset
/// (a new session counts from zero), the uint24 distance and the Cycling Power counters roll over. An energy of
/// 0xFFFF is "not available" and counts nothing.
///
/// **Workouts.** Each session the machine reports becomes one ``Workout``: Fitness Machine Status "started or
/// resumed" opens it (or resumes it after a pause, with pause and resume events), "stopped or paused" with
/// parameter 1, "stopped by safety key" or "reset" closes it; a pause is left out of its duration. A machine
/// that sends no status gets one session per connection, from its first data showing movement (a speed, a power or
/// a stroke rate above 0) to its last data before the link goes down (or the builder finishes). A machine at rest
/// makes no speed samples outside a session. The activity type follows the data: cycling (bikes, power meters), rowing, and
/// for a treadmill running when the session's average speed is at least ``runningSpeedThreshold`` m/s, else walking. The
/// totals are the distance and energy deltas counted while it was open, and the workout lists the ids of the
/// samples made meanwhile (``SampleBatch/workouts``).
extension SampleBuilder {
    /// The characteristics this extension turns into samples and workouts.
    static let fitnessMachineMeasurements: Set<BluetoothUUID> = [
        .cyclingPowerMeasurement, .indoorBikeData, .treadmillData, .rowerData, .fitnessMachineStatus,
    ]

    /// The average treadmill speed from which a session is running rather than walking (8 km/h).
    public static let runningSpeedThreshold = 8.0 / 3.6

    /// Builds the samples of a fitness machine's value; `false` when `characteristic` is not one.
    mutating func addFitnessMachine(
        _ characteristic: BluetoothUUID, _ value: [UInt8], at: Instant, into output: inout Output
    ) throws(DecodeError) -> Bool {
        switch characteristic {
        case .cyclingPowerMeasurement:
            cyclingPower(try CyclingPowerMeasurement(decoding: value), at: at, into: &output)
        case .indoorBikeData:
            indoorBike(try IndoorBikeData(decoding: value), at: at, into: &output)
        case .treadmillData:
            treadmill(try TreadmillData(decoding: value), at: at, into: &output)
        case .rowerData:
            rower(try RowerData(decoding: value), at: at, into: &output)
        case .fitnessMachineStatus:
            fitnessStatus(try FitnessMachineStatus(decoding: value), at: at, into: &output)
        default:
            return false
        }
        return true
    }

    // MARK: Cycling Power

    mutating func cyclingPower(_ measurement: CyclingPowerMeasurement, at: Instant, into output: inout Output) {
        fitness.seenCyclingPower = true
        dataArrived(.cyclingPower, moving: measurement.instantaneousPower > 0, at: at)
        if measurement.instantaneousPower >= 0 {
            appendFitness(.power, from: at, to: at, Double(measurement.instantaneousPower), &output)
        } else {
            counters.unusable += 1
        }
        let previous = fitness.lastPower
        fitness.lastPower = (at, measurement)
        let recent = previous.map { at.milliseconds - $0.at.milliseconds <= FitnessMachineState.eventTimeWindow }
        if let crank = measurement.crank, let before = previous?.measurement.crank, recent == true {
            let revolutions = crank.cumulativeRevolutions &- before.cumulativeRevolutions
            let time = crank.lastEventTime &- before.lastEventTime
            if time > 0 {
                let cadence = Double(revolutions) * 60 * 1024 / Double(time)
                if cadence <= 1_000 { appendFitness(.cadence, from: at, to: at, cadence, &output) }
            }
        }
        guard !fitness.seenIndoorBike, !context.characteristics.contains(.indoorBikeData) else { return }
        if let wheel = measurement.wheel {
            if let delta = fitness.wheelRevolutions.advance(
                to: UInt64(wheel.cumulativeRevolutions), at: at, resetsFromZero: true)
            {
                if delta.reset { counters.counterResets += 1 }
                appendDistance(
                    .cyclingDistance, metres: Double(delta.amount) * fitness.wheelCircumference, from: delta.from,
                    to: at, &output)
            }
            if let before = previous?.measurement.wheel, recent == true {
                let revolutions = wheel.cumulativeRevolutions &- before.cumulativeRevolutions
                let time = wheel.lastEventTime &- before.lastEventTime
                if time > 0 {
                    let speed = Double(revolutions) * fitness.wheelCircumference * 2048 / Double(time)
                    if speed <= 1_000 { appendFitness(.cyclingSpeed, from: at, to: at, speed, &output) }
                }
            }
        }
        if let energy = measurement.accumulatedEnergy,
            let delta = fitness.powerEnergy.advance(to: UInt64(energy), at: at, resetsFromZero: true)
        {
            if delta.reset { counters.counterResets += 1 }
            appendEnergy(kilocalories: Double(delta.amount) / 4.184, from: delta.from, to: at, &output)
        }
    }

    // MARK: Fitness Machine data

    mutating func indoorBike(_ data: IndoorBikeData, at: Instant, into output: inout Output) {
        fitness.seenIndoorBike = true
        let moving = (data.instantaneousSpeed ?? 0) > 0 || (data.instantaneousPower ?? 0) > 0
        dataArrived(.indoorBike, moving: moving, at: at)
        if let speed = data.metresPerSecond, speed > 0 || fitness.session != nil {
            appendFitness(.cyclingSpeed, from: at, to: at, speed, &output)
        }
        if !fitness.seenCyclingPower, !context.characteristics.contains(.cyclingPowerMeasurement) {
            if let cadence = data.cadencePerMinute { appendFitness(.cadence, from: at, to: at, cadence, &output) }
            if let power = data.instantaneousPower {
                if power >= 0 {
                    appendFitness(.power, from: at, to: at, Double(power), &output)
                } else {
                    counters.unusable += 1
                }
            }
        }
        machineTotals(distance: data.totalDistance, .cyclingDistance, data.common, at: at, &output)
    }

    mutating func treadmill(_ data: TreadmillData, at: Instant, into output: inout Output) {
        dataArrived(.treadmill, moving: (data.instantaneousSpeed ?? 0) > 0, at: at)
        if let speed = data.metresPerSecond, speed > 0 || fitness.session != nil {
            appendFitness(.treadmillSpeed, from: at, to: at, speed, &output)
        }
        if let inclination = data.incline?.inclination, var session = fitness.session {
            session.inclinations.add(Double(inclination) / 10)
            fitness.session = session
        }
        if let gain = data.elevationGain, var session = fitness.session {
            session.elevationAscended = Double(gain.positive) / 10
            fitness.session = session
        }
        machineTotals(distance: data.totalDistance, .walkingRunningDistance, data.common, at: at, &output)
    }

    mutating func rower(_ data: RowerData, at: Instant, into output: inout Output) {
        dataArrived(.rower, moving: (data.strokes?.rate ?? 0) > 0 || (data.instantaneousPower ?? 0) > 0, at: at)
        machineTotals(distance: data.totalDistance, nil, data.common, at: at, &output)
    }

    /// The machine's total distance (into `slot`, or only into the session when there is no type for it), its
    /// total energy and its elapsed time.
    private mutating func machineTotals(
        distance total: UInt32?, _ slot: FitnessSlot?, _ common: FitnessMachineCommon, at: Instant,
        _ output: inout Output
    ) {
        if let total, let delta = fitness.machineDistance.advance(to: UInt64(total), at: at, resetsFromZero: true) {
            if delta.reset { counters.counterResets += 1 }
            let metres = Double(delta.amount)
            if let slot {
                appendDistance(slot, metres: metres, from: delta.from, to: at, &output)
            } else if metres > 0, var session = fitness.session, session.pausedAt == nil {
                session.distance += metres
                fitness.session = session
            }
        }
        if let kilocalories = common.energy?.totalKilocalories,
            let delta = fitness.machineEnergy.advance(to: UInt64(kilocalories), at: at, resetsFromZero: true)
        {
            if delta.reset { counters.counterResets += 1 }
            appendEnergy(kilocalories: Double(delta.amount), from: delta.from, to: at, &output)
        }
        if let elapsed = common.elapsedTime, var session = fitness.session {
            session.machineElapsedTime = elapsed
            fitness.session = session
        }
    }

    // MARK: Sessions

    mutating func fitnessStatus(_ status: FitnessMachineStatus, at: Instant, into output: inout Output) {
        guard let event = status.sessionEvent else {
            counters.ignored += 1
            return
        }
        fitness.statusSeen = true
        switch event {
        case .started:
            if var session = fitness.session {
                if let pausedAt = session.pausedAt {
                    session.pausedMilliseconds += at.milliseconds - pausedAt.milliseconds
                    session.events.append(WorkoutEvent(.pause, start: pausedAt))
                    session.events.append(WorkoutEvent(.resume, start: at))
                    session.pausedAt = nil
                }
                fitness.session = session
            } else {
                fitness.session = FitnessSession(start: at)
            }
        case .paused:
            if var session = fitness.session, session.pausedAt == nil {
                session.pausedAt = at
                session.lastData = max(session.lastData, at)
                fitness.session = session
            }
        case .stopped, .reset:
            closeFitnessSession(at: at, into: &output)
        }
    }

    /// Data from a machine of `kind`: opens the connection's session when the machine reports none and this data
    /// shows it `moving` (a machine at rest keeps sending its last totals).
    private mutating func dataArrived(_ kind: FitnessMachineKind, moving: Bool, at: Instant) {
        fitness.kind = kind
        if fitness.session == nil, !fitness.statusSeen, moving { fitness.session = FitnessSession(start: at) }
        if var session = fitness.session {
            session.lastData = max(session.lastData, at)
            fitness.session = session
        }
    }

    /// Closes the open session at `end` (its last data when `nil`) into a workout in `output`.
    mutating func closeFitnessSession(at end: Instant? = nil, into output: inout Output) {
        guard var session = fitness.session else { return }
        fitness.session = nil
        let end = end ?? session.lastData
        if let pausedAt = session.pausedAt {
            session.pausedMilliseconds += max(0, end.milliseconds - pausedAt.milliseconds)
            session.events.append(WorkoutEvent(.pause, start: pausedAt))
        }
        let span = end.milliseconds - session.start.milliseconds
        guard span > 0, let kind = fitness.kind else { return }
        let duration = Double(max(0, span - session.pausedMilliseconds)) / 1000
        let activity: WorkoutActivityType
        switch kind {
        case .cyclingPower, .indoorBike: activity = .cycling
        case .rower: activity = .rowing
        case .treadmill:
            activity = duration > 0 && session.distance / duration >= Self.runningSpeedThreshold ? .running : .walking
        }
        var metadata = deviceMetadata
        if let average = session.inclinations.average {
            metadata[FitnessMachineState.averageInclinationKey] = .quantity(average, unit: "%")
            metadata[FitnessMachineState.maximumInclinationKey] = .quantity(session.inclinations.maximum, unit: "%")
        }
        if let ascended = session.elevationAscended {
            metadata[FitnessMachineState.elevationAscendedKey] = .quantity(ascended, unit: "m")
        }
        if let elapsed = session.machineElapsedTime {
            metadata[FitnessMachineState.machineElapsedTimeKey] = .quantity(Double(elapsed), unit: "s")
        }
        let workout = Workout(
            activityType: activity, start: session.start, end: end, startOffsetSeconds: offset(at: session.start),
            duration: duration, totalEnergyBurned: session.energy > 0 ? session.energy : nil,
            totalDistance: session.distance > 0 ? session.distance : nil, events: session.events,
            source: context.source, device: context.device, subject: context.subject, metadata: metadata)
        output.workouts.append(SampleBatch.WorkoutEntry(workout, sampleIDs: session.sampleIDs))
    }

    /// The link went down: the connection's session ends with its last data, and the next connection's data
    /// opens a new one unless the machine reports sessions itself.
    mutating func fitnessLinkLost(into output: inout Output) {
        closeFitnessSession(into: &output)
        fitness.statusSeen = false
        fitness.lastPower = nil
    }

    // MARK: Samples

    private mutating func appendDistance(
        _ slot: FitnessSlot, metres: Double, from start: Instant, to end: Instant, _ output: inout Output
    ) {
        let seconds = Double(end.milliseconds - start.milliseconds) / 1000
        // An impossible jump (faster than any machine's belt or wheel) re-bases rather than counts.
        guard metres <= FitnessMachineState.maximumSpeed * max(seconds, 1) + 10 else {
            counters.counterResets += 1
            return
        }
        if appendFitness(slot, from: start, to: end, metres, &output), var session = fitness.session {
            session.distance += metres
            fitness.session = session
        }
    }

    private mutating func appendEnergy(
        kilocalories: Double, from start: Instant, to end: Instant, _ output: inout Output
    ) {
        if appendFitness(.energy, from: start, to: end, kilocalories, &output), var session = fitness.session {
            session.energy += kilocalories
            fitness.session = session
        }
    }

    /// Appends a sample to its stream in `output` unless it carries nothing (a zero delta); a sample made while a
    /// session runs (not paused) is the session's. Returns whether it counts in the session's totals.
    @discardableResult
    private mutating func appendFitness(
        _ slot: FitnessSlot, from start: Instant, to end: Instant, _ value: Double, _ output: inout Output
    ) -> Bool {
        guard value.isFinite, value >= 0, !(slot.isCumulative && value == 0) else { return false }
        let tag = SampleBatch.StreamTag(origin: origin, slot: slot.rawValue, offset: offset(at: start))
        let metadata = context.motionMetadata
        output.append(tag, start: start.milliseconds, end: end.milliseconds, value: value) {
            QuantitySeries(
                type: slot.type, source: context.source, device: context.device, subject: context.subject,
                metadata: metadata)
        }
        guard var session = fitness.session, session.pausedAt == nil, start >= session.start || end > session.start
        else { return false }
        session.sampleIDs.append(
            QuantitySample.derivedID(
                type: slot.type.identifier, source: context.source.identifier, device: context.device.key,
                start: start, end: end))
        fitness.session = session
        return true
    }
}

/// Which machine a builder's fitness data comes from.
enum FitnessMachineKind: Hashable, Sendable {
    case cyclingPower, indoorBike, treadmill, rower
}

/// The kinds of fitness samples, each a stream of its own (slots after the builder's own, see `Slot`).
enum FitnessSlot: UInt32, CaseIterable {
    case power = 100, cadence, cyclingSpeed, cyclingDistance, treadmillSpeed, walkingRunningDistance, energy

    var type: HealthType {
        switch self {
        case .power: .cyclingPower
        case .cadence: .cyclingCadence
        case .cyclingSpeed: .cyclingSpeed
        case .cyclingDistance: .distanceCycling
        case .treadmillSpeed: .runningSpeed
        case .walkingRunningDistance: .distanceWalkingRunning
        case .energy: .activeEnergyBurned
        }
    }

    var isCumulative: Bool {
        switch self {
        case .cyclingDistance, .walkingRunningDistance, .energy: true
        default: false
        }
    }
}

/// One session on a fitness machine while it is open.
struct FitnessSession: Hashable, Sendable {
    var start: Instant
    var lastData: Instant
    var pausedAt: Instant?
    var pausedMilliseconds: Int64 = 0
    var events: [WorkoutEvent] = []
    /// m.
    var distance: Double = 0
    /// kcal.
    var energy: Double = 0
    var sampleIDs: [UUID] = []
    var inclinations = Running()
    /// m, the machine's positive elevation gain.
    var elevationAscended: Double?
    /// s, the machine's own elapsed time.
    var machineElapsedTime: UInt16?

    init(start: Instant) {
        self.start = start
        self.lastData = start
    }

    /// A running mean and maximum.
    struct Running: Hashable, Sendable {
        var count = 0
        var sum = 0.0
        var maximum = -Double.infinity

        mutating func add(_ value: Double) {
            count += 1
            sum += value
            maximum = max(maximum, value)
        }

        var average: Double? { count == 0 ? nil : sum / Double(count) }
    }
}

/// A builder's fitness-machine state: counters, the last Cycling Power value, the open session.
struct FitnessMachineState: Sendable {
    /// The workout metadata keys wearhouse adds (HealthKit has none for them): the mean and the largest
    /// treadmill inclination (%), and the machine's own elapsed time (s).
    static let averageInclinationKey = "averageInclination"
    static let maximumInclinationKey = "maximumInclination"
    static let machineElapsedTimeKey = "machineElapsedTime"
    /// HealthKit's `HKMetadataKeyElevationAscended` (m), from the treadmill's positive elevation gain.
    static let elevationAscendedKey = "elevationAscended"
    /// m/s: faster distance jumps re-base the counter (about 180 km/h, beyond any trainer or belt).
    static let maximumSpeed = 50.0
    /// Crank and wheel event times wrap every 64 s (32 s for the wheel's 1/2048 s): consecutive values further
    /// apart than this give no rate.
    static let eventTimeWindow: Int64 = 30_000

    /// m. The Cycling Power wheel data has no circumference; this is a 700x25C road wheel's.
    var wheelCircumference = 2.105
    var kind: FitnessMachineKind?
    var seenCyclingPower = false
    var seenIndoorBike = false
    /// Whether this connection's machine reports its sessions (Fitness Machine Status).
    var statusSeen = false
    var session: FitnessSession?
    var lastPower: (at: Instant, measurement: CyclingPowerMeasurement)?
    var wheelRevolutions = CumulativeCounter(width: 32, rollsOver: true)
    var powerEnergy = CumulativeCounter(width: 16, rollsOver: true)
    var machineDistance = CumulativeCounter(width: 24, rollsOver: true)
    var machineEnergy = CumulativeCounter(width: 16)
}
