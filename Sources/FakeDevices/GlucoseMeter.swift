public import GATT
internal import Support

/// A simulated blood glucose meter (Glucose service 0x1808) that sends its stored records only when asked through
/// the Record Access Control Point, and only to a bonded central (``requiresPairing``), as real meters do.
///
/// **Its records.** ``recordCount`` readings, sequence numbers 1 to 500, deterministic from the seed: one every
/// 15 minutes up to ``PeripheralScript/clockStart`` (a few seconds of jitter, every 7th with a time offset of
/// -5 minutes, as after a clock correction), 70-180 mg/dL sent in kg/L, capillary plasma from a finger, every
/// 37th flagged "device battery low"; every 3rd has a Glucose Measurement Context (a meal, the tester and their
/// health, carbohydrates on every 9th). It holds the first ``PeripheralScript/measurementCount`` at switch-on;
/// the others come in one per ``PeripheralScript/summaryInterval`` after that, so that a test sees new records
/// between sessions without simulating days.
///
/// **The control point.** "Report stored records" (all, at least, at most, within a range of sequence numbers,
/// first, last) queues the matching records held at that moment and sends one every ``recordInterval``: the
/// measurement, then its context; then it indicates the response code (success, or "no records found").
/// "Report number of stored records" answers with their number, "abort operation" stops a transfer and answers
/// success; a filter by time and "delete" are answered "operand" and "op code not supported". A request while a
/// transfer runs is refused with ATT error 0xFE (procedure already in progress), and any write before indications
/// are enabled on the control point with 0xFD (CCCD improperly configured). A lost link abandons the transfer,
/// or, with ``PeripheralScript/transferOutlivesLink``, pauses it until the next connection subscribes again
/// (so that the collector's new request is refused with 0xFE until it aborts the old one).
/// Every request and how far it got is kept in ``transfers``.
public struct GlucoseMeter: SimulatedPeripheral {
    /// How many records the meter has in all.
    public static let recordCount = 500
    /// The time between two records of a transfer.
    public static let recordInterval: Duration = .milliseconds(10)

    /// One stored record.
    public struct Record: Equatable, Sendable {
        public var measurement: GlucoseMeasurement
        public var context: GlucoseMeasurementContext?
        /// Since switch-on, when the meter holds it.
        public var heldFrom: Duration
        /// The concentration in mg/dL.
        public var milligramsPerDeciliter: Double
    }

    /// One request on the control point and what became of it.
    public struct Transfer: Equatable, Sendable {
        public var request: RecordAccessControlPoint
        public var at: Duration
        /// The sequence numbers it queued, in order.
        public var sequenceNumbers: [UInt16]
        /// How many of them were sent.
        public var sent = 0
        /// The response indicated at its end; `nil` when the link dropped first.
        public var response: RecordAccessControlPoint.ResponseCode?
    }

    public let identity: PeripheralIdentity
    public let deviceInformation: DeviceInformationProfile
    public private(set) var groundTruth = GroundTruth()
    /// All ``recordCount`` records, by sequence number (index 0 is sequence 1).
    public let records: [Record]
    /// Every control point request, oldest first.
    public private(set) var transfers: [Transfer] = []

    private var connected = false
    private var listening: Set<BluetoothUUID> = []
    private var lastTick: Duration = .zero
    /// The transfer running: the records left and when the next one goes out.
    private var queue: [Int] = []
    private var nextAt: Duration = .zero
    private var running = false
    /// Indications waiting for the next step (a response code, a number of records).
    private var responses: [RecordAccessControlPoint] = []
    private let transferOutlivesLink: Bool

    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(address: script.address, name: script.name, advertisedServices: [.glucoseService])
        deviceInformation = DeviceInformationProfile(script: script)
        transferOutlivesLink = script.transferOutlivesLink
        var generator = SplitMix64(seed: script.seed)
        let held = min(max(script.measurementCount, 0), Self.recordCount)
        records = (1...Self.recordCount).map { sequence in
            Self.makeRecord(
                sequence, clockStart: script.clockStart,
                heldFrom: sequence <= held ? .zero : script.summaryInterval * (sequence - held), using: &generator)
        }
    }

    private static func makeRecord(
        _ sequence: Int, clockStart: Int64, heldFrom: Duration, using generator: inout SplitMix64
    ) -> Record {
        let jitter = Int64(generator.next() % 20)
        let seconds = clockStart - Int64(recordCount - sequence + 1) * 900 + jitter
        let stamp = deviceWallTime(clockStart: seconds, at: .zero)
        let milligrams = 70 + Int(generator.next() % 111)
        let measurement = GlucoseMeasurement(
            sequenceNumber: UInt16(sequence), baseTime: stamp, timeOffset: sequence % 7 == 0 ? -5 : nil,
            concentration: GlucoseConcentration(value: SFloat(mantissa: milligrams, exponent: -5)!, type: 2),
            sensorStatus: sequence % 37 == 0 ? GlucoseSensorStatus(rawValue: 0x0001) : nil,
            contextFollows: sequence % 3 == 0)
        var context: GlucoseMeasurementContext?
        if sequence % 3 == 0 {
            let meals: [UInt8] = [1, 2, 3, 5]
            context = GlucoseMeasurementContext(
                sequenceNumber: UInt16(sequence),
                carbohydrate: sequence % 9 == 0
                    ? .init(id: 1, kilograms: SFloat(mantissa: 30 + Int(generator.next() % 60), exponent: -3)!) : nil,
                meal: meals[Int(generator.next() % 4)], tester: 1, health: 5)
        }
        return Record(
            measurement: measurement, context: context, heldFrom: heldFrom,
            milligramsPerDeciliter: Double(milligrams))
    }

    /// Low battery, sensor malfunction, sample size, strip insertion, result high-low detection, multiple bond.
    public static let feature: GlucoseFeature = [
        .lowBatteryDetection, .sensorMalfunctionDetection, .sampleSize, .stripInsertionErrorDetection,
        .resultHighLowDetection, .multipleBond,
    ]

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .glucoseService,
                characteristics: [
                    CharacteristicDefinition(uuid: .glucoseMeasurement, properties: .notify),
                    CharacteristicDefinition(uuid: .glucoseMeasurementContext, properties: .notify),
                    CharacteristicDefinition(uuid: .glucoseFeature, properties: .read),
                    CharacteristicDefinition(uuid: .recordAccessControlPoint, properties: [.write, .indicate]),
                ]),
            deviceInformation.service,
        ]
    }

    /// Real meters keep their records for a bonded collector.
    public var requiresPairing: Bool { true }

    /// The records held at `time`.
    public func held(at time: Duration) -> [Record] { records.filter { $0.heldFrom <= time } }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .glucoseFeature: return Self.feature.encoded()
        case .glucoseMeasurement, .glucoseMeasurementContext, .recordAccessControlPoint: throw .readNotPermitted
        default:
            guard let value = deviceInformation.value(of: characteristic) else { throw .attributeNotFound }
            return value
        }
    }

    /// ATT 0xFE: a transfer is running. ATT 0xFD: indications of the control point are not enabled.
    public static let procedureAlreadyInProgress = ATTError(code: 0xFE)
    public static let cccdImproperlyConfigured = ATTError(code: 0xFD)

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        guard characteristic == .recordAccessControlPoint else {
            throw writeRefusal(characteristic)
        }
        guard listening.contains(.recordAccessControlPoint) else { throw Self.cccdImproperlyConfigured }
        let request: RecordAccessControlPoint
        do throws(DecodeError) {
            request = try RecordAccessControlPoint(decoding: value)
        } catch {
            responses.append(.response(to: .reportStoredRecords, .invalidOperator))
            return
        }
        if request.opCode == .abortOperation {
            if running, !transfers.isEmpty { transfers[transfers.count - 1].response = .procedureNotCompleted }
            queue = []
            running = false
            responses.append(.response(to: .abortOperation, .success))
            return
        }
        guard !running else { throw Self.procedureAlreadyInProgress }
        switch request.opCode {
        case .reportStoredRecords:
            guard let matching = matching(request) else {
                responses.append(.response(to: .reportStoredRecords, .operandNotSupported))
                return
            }
            transfers.append(
                Transfer(request: request, at: lastTick, sequenceNumbers: matching.map { records[$0].sequence }))
            if matching.isEmpty {
                transfers[transfers.count - 1].response = .noRecordsFound
                responses.append(.response(to: .reportStoredRecords, .noRecordsFound))
            } else {
                queue = matching
                running = true
                nextAt = lastTick + Self.recordInterval
            }
        case .reportNumberOfStoredRecords:
            guard let matching = matching(request) else {
                responses.append(.response(to: .reportNumberOfStoredRecords, .operandNotSupported))
                return
            }
            responses.append(
                RecordAccessControlPoint(
                    .numberOfStoredRecordsResponse, .null, .numberOfRecords(UInt16(matching.count))))
        default:
            responses.append(
                RecordAccessControlPoint(
                    .responseCode, .null, .response(requestOpCode: request.opCodeValue, code: 2)))
        }
    }

    /// The indices of the held records a request selects; `nil` for a filter the meter does not support.
    private func matching(_ request: RecordAccessControlPoint) -> [Int]? {
        let held = records.indices.filter { records[$0].heldFrom <= lastTick }
        switch (request.filterOperator, request.operand) {
        case (.allRecords, .none): return held
        case (.firstRecord, .none): return Array(held.prefix(1))
        case (.lastRecord, .none): return Array(held.suffix(1))
        case (.greaterThanOrEqualTo, .sequenceNumber(let first)): return held.filter { records[$0].sequence >= first }
        case (.lessThanOrEqualTo, .sequenceNumber(let last)): return held.filter { records[$0].sequence <= last }
        case (.withinRangeOf, .sequenceNumberRange(let low, let high)):
            return held.filter { (low...max(low, high)).contains(records[$0].sequence) }
        default: return nil
        }
    }

    public mutating func linkChanged(connected: Bool, at time: Duration) {
        self.connected = connected
        if !connected {
            listening = []
            responses = []
            guard !transferOutlivesLink else { return }
            queue = []
            running = false
        }
    }

    public mutating func subscribed(to characteristic: BluetoothUUID, at time: Duration) {
        if connected { listening.insert(characteristic) }
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        lastTick = max(lastTick, time)
        var out: [PeripheralEmission] = []
        for response in responses {
            out.append(emit(.recordAccessControlPoint, response.encoded(), at: lastTick, indication: true))
        }
        responses = []
        // A transfer paused over a lost link goes on once the measurements are listened to again.
        if running, !listening.contains(.glucoseMeasurement) { nextAt = max(nextAt, time) }
        while running, listening.contains(.glucoseMeasurement), nextAt <= time {
            guard let index = queue.first else {
                transfers[transfers.count - 1].response = .success
                out.append(
                    emit(
                        .recordAccessControlPoint,
                        RecordAccessControlPoint.response(to: .reportStoredRecords, .success)
                            .encoded(), at: nextAt, indication: true))
                running = false
                break
            }
            queue.removeFirst()
            let record = records[index]
            out.append(emit(.glucoseMeasurement, record.measurement.encoded(), at: nextAt, indication: false))
            if let context = record.context {
                out.append(emit(.glucoseMeasurementContext, context.encoded(), at: nextAt, indication: false))
            }
            transfers[transfers.count - 1].sent += 1
            nextAt += Self.recordInterval
        }
        return out
    }

    private mutating func emit(
        _ characteristic: BluetoothUUID, _ value: [UInt8], at time: Duration, indication: Bool
    ) -> PeripheralEmission {
        let emission = PeripheralEmission(
            characteristic: characteristic, value: value, at: time, isIndication: indication)
        groundTruth.emissions.append(emission)
        return emission
    }
}

extension GlucoseMeter.Record {
    /// The record's sequence number.
    public var sequence: UInt16 { measurement.sequenceNumber }
}
