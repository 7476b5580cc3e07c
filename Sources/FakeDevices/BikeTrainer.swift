public import GATT
internal import Support

/// A simulated smart bike trainer: Cycling Power (0x1818) and the Fitness Machine service's Indoor Bike Data
/// (0x1826), as trainers that pair with both power-meter and FTMS apps expose.
///
/// Power and cadence follow smooth seeded curves; the speed is the trainer's virtual road speed for that power.
/// About once a second it notifies Indoor Bike Data (speed, cadence, total distance in metres, power, total energy
/// in kcal, elapsed time) and then Cycling Power Measurement (power, crank revolutions and the time of the last
/// one). It sends no Fitness Machine Status: a session is the connection. The totals count from switch-on.
public struct BikeTrainer: SimulatedPeripheral {
    /// What the Cycling Power Feature says: crank revolution data.
    public static let powerFeatures: CyclingPowerFeature = [.crankRevolutionDataSupported]
    /// What the Fitness Machine Feature says: cadence, distance, energy, elapsed time, power.
    public static let machineFeatures = FitnessMachineFeature(
        machine: [.cadence, .totalDistance, .expendedEnergy, .elapsedTime, .powerMeasurement],
        targetSettings: [.power, .resistance])
    /// kcal burnt per kJ of work at the pedals (about 24 % efficiency makes 1 kJ of work cost about 1 kcal).
    public static let kilocaloriesPerKilojoule = 1.0

    public let identity: PeripheralIdentity
    public let deviceInformation: DeviceInformationProfile
    public private(set) var groundTruth = GroundTruth()

    private let power: SmoothCurve
    private let cadence: SmoothCurve
    private let phase: Duration
    private let interval: Duration
    private var battery: BatteryModel
    private var index = 0
    private var lastTick: Duration?
    private var crankRevolutions = 0.0
    private var lastCrankEvent = 0.0
    private var workKilojoules = 0.0

    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name,
            advertisedServices: [.cyclingPowerService, .fitnessMachineService])
        deviceInformation = DeviceInformationProfile(script: script)
        var generator = SplitMix64(seed: script.seed)
        let watts = generator.uniform(150...230)
        power = SmoothCurve(generator: &generator, base: watts, amplitude: 60, periods: [90, 31, 11], range: 60...450)
        let rpm = generator.uniform(78...92)
        cadence = SmoothCurve(generator: &generator, base: rpm, amplitude: 10, periods: [70, 23], range: 55...120)
        interval = script.measurementInterval
        phase = .milliseconds(Int64(generator.next() % 1000))
        battery = BatteryModel(seed: script.seed, drainInterval: script.batteryDrainInterval)
    }

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .cyclingPowerService,
                characteristics: [
                    CharacteristicDefinition(uuid: .cyclingPowerMeasurement, properties: .notify),
                    CharacteristicDefinition(uuid: .cyclingPowerFeature, properties: .read),
                    CharacteristicDefinition(uuid: .sensorLocation, properties: .read),
                ]),
            ServiceDefinition(
                uuid: .fitnessMachineService,
                characteristics: [
                    CharacteristicDefinition(uuid: .fitnessMachineFeature, properties: .read),
                    CharacteristicDefinition(uuid: .indoorBikeData, properties: .notify),
                ]),
            deviceInformation.service, BatteryModel.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .cyclingPowerMeasurement, .indoorBikeData: throw .readNotPermitted
        case .cyclingPowerFeature: return Self.powerFeatures.encoded()
        case .fitnessMachineFeature: return Self.machineFeatures.encoded()
        case .sensorLocation: return SensorLocation(rawValue: 13).encoded()  // rear hub
        case .batteryLevel: return battery.encoded(at: lastTick ?? .zero)
        default:
            guard let value = deviceInformation.value(of: characteristic) else { throw .attributeNotFound }
            return value
        }
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        throw .writeNotPermitted
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var out: [PeripheralEmission] = []
        while true {
            let tick = phase + interval * index
            guard tick <= time else { break }
            out += measurements(at: tick)
            if let level = battery.emission(at: tick) { out.append(level) }
            lastTick = tick
            index += 1
        }
        groundTruth.emissions += out
        return out
    }

    /// The virtual road speed for `watts`, m/s: about 30 km/h at 200 W.
    static func speed(watts: Double) -> Double { 8.33 * (watts / 200).squareRoot() }

    private mutating func measurements(at tick: Duration) -> [PeripheralEmission] {
        let seconds = SimulationTime.seconds(tick)
        let watts = power.value(at: seconds).rounded()
        let rpm = cadence.value(at: seconds)
        let speed = Self.speed(watts: watts)
        let elapsed = lastTick.map { SimulationTime.seconds(tick - $0) } ?? 0
        groundTruth.distanceMeters += speed * elapsed
        workKilojoules += watts * elapsed / 1000
        groundTruth.energyExpended = workKilojoules
        let before = crankRevolutions.rounded(.down)
        crankRevolutions += rpm / 60 * elapsed
        let whole = crankRevolutions.rounded(.down)
        if whole > before {
            // The last whole revolution ended this long before the tick.
            lastCrankEvent = seconds - (crankRevolutions - whole) / (rpm / 60)
        }
        let kilocalories = workKilojoules * Self.kilocaloriesPerKilojoule
        let bike = IndoorBikeData(
            instantaneousSpeed: UInt16((speed * 360).rounded()), instantaneousCadence: UInt16((rpm * 2).rounded()),
            totalDistance: UInt32(groundTruth.distanceMeters.rounded(.down)) & 0xFF_FFFF,
            instantaneousPower: Int16(watts),
            common: FitnessMachineCommon(
                energy: FitnessMachineEnergy(
                    total: UInt16(min(kilocalories.rounded(.down), 0xFFFE)),
                    perHour: UInt16((watts * 3.6 * Self.kilocaloriesPerKilojoule).rounded())),
                elapsedTime: UInt16(truncatingIfNeeded: Int(seconds))))
        let crank = CSCMeasurement.CrankData(
            cumulativeRevolutions: UInt16(truncatingIfNeeded: Int(whole)),
            lastEventTime: UInt16(truncatingIfNeeded: Int((lastCrankEvent * 1024).rounded(.down))))
        let measurement = CyclingPowerMeasurement(instantaneousPower: Int16(watts), crank: crank)
        return [
            PeripheralEmission(characteristic: .indoorBikeData, value: bike.encoded(), at: tick),
            PeripheralEmission(characteristic: .cyclingPowerMeasurement, value: measurement.encoded(), at: tick),
        ]
    }
}
