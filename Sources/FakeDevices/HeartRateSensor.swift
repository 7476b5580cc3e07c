public import GATT
internal import Support

/// A simulated heart-rate sensor (Heart Rate service 0x180D): a chest strap or a wrist monitor, and the heart
/// part of ``InfiniTimeWatch``.
///
/// The heart rate follows a smooth seeded curve. Beats are placed on a 1/1024 s timeline, each RR interval
/// matching the heart rate at that beat, so the RR intervals sent add up to the time between the first and
/// the last beat sent: no beat is lost or counted twice. Measurements go out about once a second, carrying
/// the RR intervals completed since the previous one (at most as many as fit in 20 bytes; the rest wait for
/// the next). Energy Expended (kJ) is sent on every 10th measurement and stops at 0xFFFF; writing 0x01 to the
/// Heart Rate Control Point resets it.
public struct HeartRateSensor: SimulatedPeripheral {
    /// What the sensor sends and exposes.
    public struct Profile: Hashable, Sendable {
        /// RR intervals in every measurement that has a completed beat.
        public var sendsRRIntervals: Bool
        /// Contact supported (and always detected) or not supported.
        public var reportsContact: Bool
        /// Energy Expended on every 10th measurement, and the control point that resets it.
        public var sendsEnergyExpended: Bool
        /// Body Sensor Location, when the sensor has that characteristic.
        public var location: BodySensorLocation?
        /// Whether the peripheral has its own Device Information and Battery services.
        public var hasDeviceInformationAndBattery: Bool

        /// A profile of your own (the presets are ``chestStrap`` and ``wristMonitor``).
        public init(
            sendsRRIntervals: Bool, reportsContact: Bool, sendsEnergyExpended: Bool, location: BodySensorLocation?,
            hasDeviceInformationAndBattery: Bool = true
        ) {
            self.sendsRRIntervals = sendsRRIntervals
            self.reportsContact = reportsContact
            self.sendsEnergyExpended = sendsEnergyExpended
            self.location = location
            self.hasDeviceInformationAndBattery = hasDeviceInformationAndBattery
        }

        /// RR intervals, contact, energy, chest.
        public static let chestStrap = Profile(
            sendsRRIntervals: true, reportsContact: true, sendsEnergyExpended: true, location: .chest)
        /// No RR, contact not supported, no energy, wrist.
        public static let wristMonitor = Profile(
            sendsRRIntervals: false, reportsContact: false, sendsEnergyExpended: false, location: .wrist)
    }

    /// Address, name and advertised services, from the script.
    public let identity: PeripheralIdentity
    /// What this sensor sends and exposes.
    public let profile: Profile
    /// What the Device Information service answers.
    public let deviceInformation: DeviceInformationProfile
    /// What was sent and measured so far.
    public private(set) var groundTruth = GroundTruth()

    private let curve: SmoothCurve
    /// The first measurement goes out at `phase`, the next ones a second apart.
    private let phase: Duration
    /// Between two measurements.
    private let interval: Duration
    private var battery: BatteryModel
    private var index = 0
    private var lastTick: Duration = .zero
    /// The last beat, in 1/1024 s since switch-on, and the interval to the next one.
    private var lastBeat: Int64
    private var nextInterval: Int64
    private var pendingIntervals: [UInt16] = []
    /// kJ on the counter: the value at switch-on (or 0 after a reset) plus what was spent since.
    private var energy: Double

    /// Builds the sensor.
    ///
    /// - Parameters:
    ///   - script: address, name, seed, initial energy counter and battery drain; its faults are not applied
    ///     here (``PeripheralScript/makePeripheral()`` wraps the sensor in a ``MisbehavingPeripheral`` for them).
    ///   - profile: what the sensor sends and exposes.
    ///   - advertisedServices: the advertisement's services; the Heart Rate service by default.
    public init(script: PeripheralScript, profile: Profile, advertisedServices: [BluetoothUUID]? = nil) {
        self.profile = profile
        identity = PeripheralIdentity(
            address: script.address, name: script.name,
            advertisedServices: advertisedServices ?? [.heartRateService])
        deviceInformation = DeviceInformationProfile(script: script)
        var generator = SplitMix64(seed: script.seed)
        let resting = generator.uniform(72...120)
        curve = SmoothCurve(
            generator: &generator, base: resting, amplitude: 40, periods: [90, 37, 13], range: 40...200)
        interval = script.measurementInterval
        phase = .milliseconds(Int64(generator.next() % 1000))
        lastBeat = Int64(generator.next() % 1024)
        nextInterval = 0
        battery = BatteryModel(seed: script.seed, drainInterval: script.batteryDrainInterval)
        energy = Double(script.initialEnergyExpended)
        nextInterval = Self.interval(bpm: curve.value(at: Double(lastBeat) / 1024))
        groundTruth.energyExpended = energy
    }

    public var services: [ServiceDefinition] {
        var heart = [CharacteristicDefinition(uuid: .heartRateMeasurement, properties: .notify)]
        if profile.location != nil {
            heart.append(CharacteristicDefinition(uuid: .bodySensorLocation, properties: .read))
        }
        if profile.sendsEnergyExpended {
            heart.append(CharacteristicDefinition(uuid: .heartRateControlPoint, properties: .write))
        }
        var services = [ServiceDefinition(uuid: .heartRateService, characteristics: heart)]
        if profile.hasDeviceInformationAndBattery {
            services += [deviceInformation.service, BatteryModel.service]
        }
        return services
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .heartRateMeasurement, .heartRateControlPoint:
            throw .readNotPermitted
        case .bodySensorLocation:
            guard let location = profile.location else { throw .attributeNotFound }
            return location.encoded()
        case .batteryLevel where profile.hasDeviceInformationAndBattery:
            return battery.encoded(at: lastTick)
        default:
            guard profile.hasDeviceInformationAndBattery, let value = deviceInformation.value(of: characteristic)
            else { throw .attributeNotFound }
            return value
        }
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        guard characteristic == .heartRateControlPoint, profile.sendsEnergyExpended else {
            throw writeRefusal(characteristic)
        }
        guard value == HeartRateControlPoint.resetEnergyExpended.encoded() else { throw .applicationError80 }
        energy = 0
        groundTruth.energyExpended = 0
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var out: [PeripheralEmission] = []
        while true {
            let tick = phase + interval * index
            guard tick <= time else { break }
            out.append(measurement(at: tick))
            if profile.hasDeviceInformationAndBattery, let level = battery.emission(at: tick) { out.append(level) }
            lastTick = tick
            index += 1
        }
        groundTruth.emissions += out
        return out
    }

    private static func interval(bpm: Double) -> Int64 { Int64((61_440 / bpm).rounded()) }

    private mutating func measurement(at tick: Duration) -> PeripheralEmission {
        let now = SimulationTime.ticks(tick)
        while lastBeat + nextInterval <= now {
            lastBeat += nextInterval
            if profile.sendsRRIntervals { pendingIntervals.append(UInt16(nextInterval)) }
            nextInterval = Self.interval(bpm: curve.value(at: Double(lastBeat) / 1024))
        }
        let seconds = SimulationTime.seconds(tick)
        let bpm = curve.value(at: seconds)
        // About 4 kJ/min at rest, rising with the heart rate.
        energy += (4 + max(0, bpm - 60) * 0.12) * SimulationTime.seconds(tick - lastTick) / 60
        groundTruth.energyExpended = energy

        let sendsEnergy = profile.sendsEnergyExpended && index % 10 == 0
        let capacity = sendsEnergy ? 8 : 9
        let intervals = Array(pendingIntervals.prefix(capacity))
        pendingIntervals.removeFirst(intervals.count)
        let heartRate = UInt16(bpm.rounded())
        let value = HeartRateMeasurement(
            heartRate: heartRate, format: .uint8,
            sensorContact: profile.reportsContact ? .detected : .notSupported,
            energyExpended: sendsEnergy ? UInt16(min(Double(HeartRateMeasurement.energySaturated), energy)) : nil,
            rrIntervals: RRIntervals(intervals))
        groundTruth.heartRates.append(heartRate)
        groundTruth.rrIntervals += intervals
        return PeripheralEmission(characteristic: .heartRateMeasurement, value: value.encoded(), at: tick)
    }
}
