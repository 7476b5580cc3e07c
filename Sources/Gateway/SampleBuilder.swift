internal import Foundation
public import GATT
public import Health

/// Turns one sensor's notifications into typed samples tagged with its ``SensorContext``.
///
/// One builder lives as long as the service (or the replay) and across reconnections, so cumulative counters
/// (energy, distance, steps) continue from the last value seen: what happened while the link was down is
/// counted once the sensor is back, over the interval it covers. Rules, per characteristic:
///
/// - Heart Rate Measurement: a `heartRate` sample per notification, except 0 bpm and values sent while the
///   sensor reports contact *not detected* (counted in ``Counters/outOfContact``); RR intervals go into
///   `heartbeatSeries` samples of ``Settings/seriesWindow`` (``HeartbeatAccumulator``), each followed by
///   `heartRateVariabilitySDNN` over the same beats (RMSSD in metadata); Energy Expended (kJ since reset) becomes
///   `activeEnergyBurned` deltas in kcal (a decrease is a reset, 0xFFFF saturates until the next reset).
/// - RSC Measurement: `runningSpeed`, `stepCadence`, `runningStrideLength` per notification; Total Distance into
///   `distanceWalkingRunning` deltas (32-bit rollover handled, a decrease is a reset, an impossible jump re-bases);
///   `stepCount` estimated as cadence × time between notifications, marked `wasEstimated`.
/// - PAMS Step Counter Activity Summary and the InfiniTime step count: `stepCount` deltas of the counter.
/// - Scales, body composition analysers, blood pressure cuffs, thermometers and pulse oximeters: see
///   `SampleBuilder+HealthDevices.swift` (their own time stamps, multi-user subjects, correlations).
///
/// Values that do not decode are counted (``Counters/malformed``) with the error kept for the log; they never
/// stop the builder.
public struct SampleBuilder: Sendable {
    public struct Settings: Hashable, Sendable {
        /// How long a heartbeat series (and its HRV) covers before it is closed.
        public var seriesWindow: Duration
        /// Notifications further apart than this break the RR chain (a gap) and cumulative estimates.
        public var gapThreshold: Duration
        /// The fastest plausible walking or running speed; faster distance jumps re-base the counter.
        public var maxSpeedMetresPerSecond: Double
        /// How far in the future a health device's time stamp may be before the receive time is used instead.
        public var deviceClockTolerance: Duration

        public init(
            seriesWindow: Duration = .seconds(60), gapThreshold: Duration = .milliseconds(2_500),
            maxSpeedMetresPerSecond: Double = 15, deviceClockTolerance: Duration = .seconds(300)
        ) {
            self.seriesWindow = seriesWindow
            self.gapThreshold = gapThreshold
            self.maxSpeedMetresPerSecond = maxSpeedMetresPerSecond
            self.deviceClockTolerance = deviceClockTolerance
        }
    }

    /// What the builder did, for `wearhouse sensors` and the replay summary.
    public struct Counters: Hashable, Sendable {
        public var notifications = 0
        public var malformed = 0
        public var outOfContact = 0
        public var zeroHeartRate = 0
        public var counterResets = 0
        public var ignored = 0
        /// Health-device measurements with nothing to store: unsuccessful, a special value (NaN, NRes, ...), or a
        /// status saying invalid, unavailable or demonstration data.
        public var unusable = 0
        /// RR intervals not put into a heartbeat series: implausible ones, and a restarted beat clock's beats that
        /// fell at or before the last beat placed (``HeartbeatAccumulator``).
        public var beatsLeftOut = 0
        public init() {}
    }

    /// The samples one step produced: streams of quantity samples and heartbeat series.
    public typealias Output = SampleBatch

    public var context: SensorContext {
        didSet { refreshTags() }
    }
    public let settings: Settings
    /// The context's metadata dictionaries, built once per context (every sample shares their storage).
    private var heartRateMetadata: [String: MetadataValue] = [:]
    private var motionMetadata: [String: MetadataValue] = [:]
    /// Motion metadata with the RSC walking/running status, when the sensor reports it.
    private var walkingMetadata: [String: MetadataValue] = [:]
    private var runningMetadata: [String: MetadataValue] = [:]
    private var estimatedMetadata: [String: MetadataValue] = [:]
    /// Names this builder's streams in batches (``SampleBatch/StreamTag``); new with every context, since a
    /// stream's source, device, subject and metadata come from it.
    var origin: UInt64 = 0
    /// The UTC offset of the context's time zone, valid from `from` until the next transition (ms).
    private var offsetCache: (from: Int64, until: Int64, offset: Int32)?
    public internal(set) var counters = Counters()
    /// The last decode failure, for the log.
    public private(set) var lastError: DecodeError?
    var timeline: Timeline
    var beats: HeartbeatAccumulator
    var energy = CumulativeCounter(width: 16, saturatesAt: UInt64(HeartRateMeasurement.energySaturated))
    var distance = CumulativeCounter(width: 32, rollsOver: true)
    var pamsSteps = CumulativeCounter(width: 32)
    var pamsSession: UInt32?
    var watchSteps = CumulativeCounter(width: 32)
    var glucose = GlucoseState()
    /// The instant and value of each characteristic's last notification (see ``instant(of:_:receivedAt:)``).
    private var lastArrivals = LastArrivals()
    /// The previous RSC notification: when, and its cadence (for the step estimate).
    var lastRSC: (at: Instant, cadence: UInt8)?
    /// Bike trainers, power meters, treadmills and rowers (`SampleBuilder+FitnessMachines.swift`).
    var fitness = FitnessMachineState()

    public init(context: SensorContext, settings: Settings = Settings(), timeline: Timeline = Timeline()) {
        self.context = context
        self.settings = settings
        self.timeline = timeline
        self.beats = HeartbeatAccumulator(
            window: settings.seriesWindow.wholeMilliseconds, gapThreshold: settings.gapThreshold.wholeMilliseconds)
        refreshTags()
    }

    private mutating func refreshTags() {
        heartRateMetadata = context.heartRateMetadata
        motionMetadata = context.motionMetadata
        walkingMetadata = motionMetadata
        runningMetadata = motionMetadata
        if context.reportsWalkingOrRunning {
            walkingMetadata["motion"] = .string("walking")
            runningMetadata["motion"] = .string("running")
        }
        estimatedMetadata = motionMetadata
        estimatedMetadata[MetadataKey.wasEstimated] = .bool(true)
        offsetCache = nil
        origin = UInt64.random(in: 1...UInt64.max)
    }

    /// The kinds of samples a builder makes, each a stream of its own (per UTC offset).
    enum Slot: UInt32, CaseIterable {
        case heartRate, energy, steps, estimatedSteps, distance
        case walkingSpeed, walkingCadence, walkingStride
        case runningSpeed, runningCadence, runningStride

        var type: HealthType {
            switch self {
            case .heartRate: .heartRate
            case .energy: .activeEnergyBurned
            case .steps, .estimatedSteps: .stepCount
            case .distance: .distanceWalkingRunning
            case .walkingSpeed, .runningSpeed: .runningSpeed
            case .walkingCadence, .runningCadence: .stepCadence
            case .walkingStride, .runningStride: .runningStrideLength
            }
        }

        /// Cumulative types carry deltas: a zero one is no sample.
        var isCumulative: Bool {
            switch self {
            case .energy, .steps, .estimatedSteps, .distance: true
            default: false
            }
        }
    }

    /// Where each slot's stream was in the batch last filled (``SampleBatch/append(_:start:end:value:hint:stream:)``).
    private var streamHints = [Int](repeating: -1, count: Slot.allCases.count)

    /// The UTC offset at `instant`, asking the time zone only when a DST transition may lie in between.
    mutating func offset(at instant: Instant) -> Int32 {
        let milliseconds = instant.milliseconds
        if let cache = offsetCache, milliseconds >= cache.from, milliseconds < cache.until { return cache.offset }
        let offset = context.offset(at: instant)
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        let next = context.timeZone.nextDaylightSavingTimeTransition(after: date)
        let until = next.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) } ?? Int64.max
        offsetCache = (milliseconds, until, offset)
        return offset
    }

    /// Builds the samples of one notification.
    public mutating func add(_ notification: GATTNotification) -> Output {
        var output = Output()
        add(notification, into: &output)
        return output
    }

    /// Builds the samples of one notification into `output`, extending this builder's streams there.
    public mutating func add(_ notification: GATTNotification, into output: inout Output) {
        add(notification.characteristic, notification.value, receivedAt: notification.receivedAt, into: &output)
    }

    /// Builds the samples of a value of `characteristic` received at `receivedAt` into `output`.
    public mutating func add(
        _ characteristic: BluetoothUUID, _ value: [UInt8], receivedAt: Timestamp, into output: inout Output
    ) {
        counters.notifications += 1
        let at = instant(of: characteristic, value, receivedAt: receivedAt)
        do throws(DecodeError) {
            switch characteristic {
            case .heartRateMeasurement:
                heartRate(try HeartRateMeasurement(decoding: value), at: at, into: &output)
            case .rscMeasurement:
                rsc(try RSCMeasurement(decoding: value), at: at, into: &output)
            case .stepCounterActivitySummaryData:
                pams(try StepCounterActivitySummaryData(decoding: value), at: at, into: &output)
            case .infiniTimeStepCount:
                let steps = try InfiniTimeStepCount(decoding: value).steps
                if let delta = watchSteps.advance(to: UInt64(steps), at: at, resetsFromZero: true) {
                    if delta.reset { counters.counterResets += 1 }
                    append(.steps, from: delta.from, to: at, Double(delta.amount), motionMetadata, &output)
                }
            case .glucoseMeasurement, .glucoseMeasurementContext, .recordAccessControlPoint:
                try addGlucose(characteristic, value, at: at, into: &output)
            case _ where Self.fitnessMachineMeasurements.contains(characteristic):
                _ = try addFitnessMachine(characteristic, value, at: at, into: &output)
            default:
                if try !addHealthDevice(characteristic, value, at: at, into: &output) { counters.ignored += 1 }
            }
        } catch {
            counters.malformed += 1
            lastError = error
        }
    }

    /// The instant of a notification: its arrival on the timeline, except that a different value of the same
    /// characteristic arriving in the same millisecond as its last one (or earlier) is placed a millisecond after
    /// it, whatever other characteristics arrived in between. Notifications held up (a busy host, a stalled link)
    /// arrive in bursts; samples at one instant would be one sample, and the rest lost as conflicts. The same
    /// value again in that millisecond is taken for a repeat and takes the same instant, so it is stored once (and
    /// counted as a duplicate): bluetoothd's notification callback runs once per notify session, so another
    /// program subscribed to the same characteristic can double every notification (docs/bluez.md, R11). The
    /// price: a burst holding the same reading twice in a row keeps it once.
    /// A pulse oximeter's continuous reading arriving on a whole second moves a millisecond on: its spot-checks
    /// are placed at their whole-second stamps, and the two would be one sample of the same device and type.
    mutating func instant(of characteristic: BluetoothUUID, _ value: [UInt8], receivedAt: Timestamp) -> Instant {
        var at = timeline.instant(of: receivedAt)
        let slot = lastArrivals.slot(of: characteristic)
        if let slot, at <= lastArrivals.entries[slot].at {
            let last = lastArrivals.entries[slot]
            at = last.value == value ? last.at : Instant(milliseconds: last.at.milliseconds + 1)
        }
        if characteristic == .plxContinuousMeasurement, at.milliseconds % 1000 == 0 {
            at = Instant(milliseconds: at.milliseconds + 1)
        }
        lastArrivals.set(characteristic, at: at, value: value, in: slot)
        return at
    }

    /// Closes what is still open (the current heartbeat series) at the end of a run or before a stop.
    public mutating func finish() -> Output {
        var output = Output()
        finish(into: &output)
        return output
    }

    /// Closes what is still open into `output`.
    public mutating func finish(into output: inout Output) {
        if let closed = beats.close() { appendSeries(closed, into: &output) }
        closeFitnessSession(into: &output)
    }

    /// The link went down: the RR chain breaks (beats cannot be placed across it); counters keep their values.
    public mutating func linkLost() -> Output {
        var output = Output()
        linkLost(into: &output)
        return output
    }

    /// The link went down: what it closes goes into `output`.
    public mutating func linkLost(into output: inout Output) {
        if let closed = beats.close() { appendSeries(closed, into: &output) }
        beats.breakChain()
        lastRSC = nil
        fitnessLinkLost(into: &output)
    }

    // MARK: Heart rate

    mutating func heartRate(_ measurement: HeartRateMeasurement, at: Instant, into output: inout Output) {
        if measurement.sensorContact == .notDetected {
            counters.outOfContact += 1
            beats.breakChain()
        } else if measurement.heartRate == 0 {
            counters.zeroHeartRate += 1
        } else {
            append(.heartRate, from: at, to: at, Double(measurement.heartRate), heartRateMetadata, &output)
            if !measurement.rrIntervals.isEmpty {
                for closed in beats.add(rr1024: measurement.rrIntervals, arrivedAt: at) {
                    appendSeries(closed, into: &output)
                }
                counters.beatsLeftOut = beats.artefacts + beats.overlapping
            }
        }
        if let expended = measurement.energyExpended,
            let delta = energy.advance(to: UInt64(expended), at: at, resetsFromZero: true)
        {
            if delta.reset { counters.counterResets += 1 }
            let kcal = Double(delta.amount) / 4.184
            append(.energy, from: delta.from, to: at, kcal, heartRateMetadata, &output)
        }
    }

    mutating func appendSeries(_ closed: HeartbeatAccumulator.Series, into output: inout Output) {
        let start = Instant(milliseconds: closed.startMilliseconds)
        let end = Instant(milliseconds: closed.endMilliseconds)
        let series = HeartbeatSeriesSample(
            start: start, end: end, startOffsetSeconds: offset(at: start), beats: closed.beats,
            source: context.source, device: context.device, subject: context.subject,
            metadata: heartRateMetadata)
        output.heartbeats.append(series)
        guard let hrv = closed.variability else { return }
        // Its own stream: the RMSSD in its metadata differs from sample to sample.
        var metadata = heartRateMetadata
        metadata[MetadataKey.heartRateVariabilityRMSSD] = .quantity(hrv.rmssd, unit: "ms")
        var stream = QuantitySeries(
            type: .heartRateVariabilitySDNN, startOffsetSeconds: offset(at: start), source: context.source,
            device: context.device, subject: context.subject, metadata: metadata)
        stream.append(start: start.milliseconds, end: end.milliseconds, value: hrv.sdnn)
        output.append(stream)
    }

    // MARK: Motion

    mutating func rsc(_ measurement: RSCMeasurement, at: Instant, into output: inout Output) {
        let running = context.reportsWalkingOrRunning && measurement.isRunning
        let metadata = running ? runningMetadata : walkingMetadata
        let speed, cadence, stride: Slot
        if running {
            (speed, cadence, stride) = (.runningSpeed, .runningCadence, .runningStride)
        } else {
            (speed, cadence, stride) = (.walkingSpeed, .walkingCadence, .walkingStride)
        }
        append(speed, from: at, to: at, Double(measurement.speed) / 256, metadata, &output)
        append(cadence, from: at, to: at, Double(measurement.cadence), metadata, &output)
        if let strideLength = measurement.strideLength, strideLength > 0 {
            append(stride, from: at, to: at, Double(strideLength) / 100, metadata, &output)
        }
        if let total = measurement.totalDistance,
            let delta = distance.advance(to: UInt64(total), at: at, resetsFromZero: true)
        {
            if delta.reset { counters.counterResets += 1 }
            let metres = Double(delta.amount) / 10
            let seconds = Double(at.milliseconds - delta.from.milliseconds) / 1000
            if metres <= settings.maxSpeedMetresPerSecond * max(seconds, 1) + 10 {
                append(.distance, from: delta.from, to: at, metres, motionMetadata, &output)
            } else {
                counters.counterResets += 1  // an impossible jump: re-based, nothing counted
            }
        }
        if let last = lastRSC, at > last.at,
            at.milliseconds - last.at.milliseconds <= settings.gapThreshold.wholeMilliseconds
        {
            let steps = Double(last.cadence) * Double(at.milliseconds - last.at.milliseconds) / 60_000
            if steps > 0 {
                append(.estimatedSteps, from: last.at, to: at, steps, estimatedMetadata, &output)
            }
        }
        lastRSC = (at, measurement.cadence)
    }

    mutating func pams(_ summary: StepCounterActivitySummaryData, at: Instant, into output: inout Output) {
        let session = UInt32(summary.sessionID) << 16 | UInt32(summary.subSessionID)
        if pamsSession != session {
            // A new (sub-)session counts from zero.
            if pamsSession != nil { pamsSteps.rebase(to: 0, at: at) }
            pamsSession = session
        }
        let total =
            UInt64(summary.normalWalkingSteps ?? 0) + UInt64(summary.intensitySteps ?? 0)
            + UInt64(summary.floorSteps ?? 0)
        guard summary.normalWalkingSteps != nil || summary.intensitySteps != nil || summary.floorSteps != nil,
            let delta = pamsSteps.advance(to: total, at: at, resetsFromZero: true)
        else { return }
        if delta.reset { counters.counterResets += 1 }
        append(.steps, from: delta.from, to: at, Double(delta.amount), motionMetadata, &output)
    }

    /// Appends a sample to its stream in `output` unless it carries nothing (a zero delta of a cumulative type).
    mutating func append(
        _ slot: Slot, from start: Instant, to end: Instant, _ value: Double, _ metadata: [String: MetadataValue],
        _ output: inout Output
    ) {
        if slot.isCumulative, value <= 0 { return }
        let tag = SampleBatch.StreamTag(origin: origin, slot: slot.rawValue, offset: offset(at: start))
        output.append(
            tag, start: start.milliseconds, end: end.milliseconds, value: value,
            hint: &streamHints[Int(slot.rawValue)]
        ) {
            QuantitySeries(
                type: slot.type, source: context.source, device: context.device, subject: context.subject,
                metadata: metadata)
        }
    }
}

extension Duration {
    /// Whole milliseconds (rounded down).
    var wholeMilliseconds: Int64 {
        Int64(clamping: attoseconds / 1_000_000_000_000_000)  // `components` divides by 10^18, several times slower
    }
}

/// The last arrival of each characteristic of one sensor (``SampleBuilder/instant(of:_:receivedAt:)``): a short
/// list searched from the front, since a sensor notifies a handful of characteristics (a dictionary hashed a
/// UUID twice per notification, a third of the builder's time in the replay benchmark). At most ``capacity``
/// are kept; past that (a sensor sending more distinct characteristics than any does), the entry added longest ago
/// makes room, and a burst of the characteristic it named is no longer told apart.
struct LastArrivals {
    static let capacity = 16
    private(set) var entries: [(characteristic: BluetoothUUID, at: Instant, value: [UInt8])] = []
    /// The entry replaced next once the list is full.
    private var oldest = 0

    /// Where `characteristic`'s last arrival is, if it is remembered.
    func slot(of characteristic: BluetoothUUID) -> Int? {
        entries.firstIndex { $0.characteristic == characteristic }
    }

    /// Remembers `characteristic`'s arrival, in `slot` when ``slot(of:)`` found one.
    mutating func set(_ characteristic: BluetoothUUID, at: Instant, value: [UInt8], in slot: Int?) {
        if let slot {
            entries[slot].at = at
            entries[slot].value = value
        } else if entries.count < Self.capacity {
            entries.append((characteristic, at, value))
        } else {
            entries[oldest] = (characteristic, at, value)
            oldest = (oldest + 1) % Self.capacity
        }
    }
}
