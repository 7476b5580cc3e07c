public import GATT
internal import Support

/// A simulated thermometer (Health Thermometer service 0x1809) that measures periodically, as a bedside or
/// body-worn one does.
///
/// Every ``PeripheralScript/summaryInterval`` (its Measurement Interval, 0x2A21, in whole seconds), starting right
/// after switch-on, it takes a measurement: while the reading settles it notifies ``intermediateSteps``
/// Intermediate Temperatures a second apart (closer together when the interval is shorter than that allows),
/// rising towards the result, then indicates one Temperature Measurement with the result and its own time stamp,
/// its clock set to ``PeripheralScript/clockStart`` at switch-on. Results follow a slow seeded curve between
/// about 36.2 and 37.4 °C, sent in hundredths of a degree Celsius. Where it measures (armpit, ear, mouth or
/// tympanum, from the seed) is in its Temperature Type characteristic (0x2A1D), so the measurements leave that
/// field out. It sends only to a client that listens on a connection: intermediate temperatures while their
/// notifications are enabled, results while indications are; a measurement nobody listens to is only shown on
/// its display.
public struct Thermometer: SimulatedPeripheral {
    /// Intermediate temperatures before each result.
    public static let intermediateSteps = 3
    /// The longest time between two values of one measurement.
    public static let settlingStep: Duration = .seconds(1)

    public let identity: PeripheralIdentity
    public let deviceInformation: DeviceInformationProfile
    public private(set) var groundTruth = GroundTruth()
    /// Where on the body it measures (its Temperature Type characteristic).
    public let temperatureType: TemperatureType
    /// The results sent, oldest first.
    public private(set) var measurements: [TemperatureMeasurement] = []

    private let interval: Duration
    private let step: Duration
    private let clockStart: Int64
    private let curve: SmoothCurve
    private var generator: SplitMix64
    private var connected = false
    /// The characteristics a client enabled on this connection, and since when.
    private var listening: [BluetoothUUID: Duration] = [:]
    /// The measurement under way and the next of its values (0 to ``intermediateSteps``, the last the result).
    private var index = 0
    private var stage = 0
    /// The result the current measurement settles to, °C, and how far below it the first intermediate is.
    private var target = 0.0
    private var rise = 0.0

    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name, advertisedServices: [.healthThermometerService])
        deviceInformation = DeviceInformationProfile(script: script)
        var generator = SplitMix64(seed: script.seed)
        let base = generator.uniform(36.5...37.1)
        curve = SmoothCurve(generator: &generator, base: base, amplitude: 0.3, periods: [1800, 600], range: 35...42)
        let sites: [TemperatureType] = [.armpit, .ear, .mouth, .tympanum]
        temperatureType = generator.pick(sites)
        self.generator = generator
        interval = script.summaryInterval
        step = min(Self.settlingStep, script.summaryInterval / (Self.intermediateSteps + 1))
        clockStart = script.clockStart
    }

    /// What its Measurement Interval characteristic says: the interval in whole seconds, at least 1.
    public var measurementInterval: MeasurementInterval {
        let seconds = max(1, (SimulationTime.seconds(interval)).rounded())
        return MeasurementInterval(seconds: UInt16(min(seconds, Double(UInt16.max))))
    }

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .healthThermometerService,
                characteristics: [
                    CharacteristicDefinition(uuid: .temperatureMeasurement, properties: .indicate),
                    CharacteristicDefinition(uuid: .temperatureType, properties: .read),
                    CharacteristicDefinition(uuid: .intermediateTemperature, properties: .notify),
                    CharacteristicDefinition(uuid: .measurementInterval, properties: .read),
                ]),
            deviceInformation.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .temperatureType: return temperatureType.encoded()
        case .measurementInterval: return measurementInterval.encoded()
        case .temperatureMeasurement, .intermediateTemperature: throw .readNotPermitted
        default:
            guard let value = deviceInformation.value(of: characteristic) else { throw .attributeNotFound }
            return value
        }
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        throw writeRefusal(characteristic)
    }

    public mutating func linkChanged(connected: Bool, at time: Duration) {
        self.connected = connected
        if !connected { listening = [:] }
    }

    public mutating func subscribed(to characteristic: BluetoothUUID, at time: Duration) {
        guard connected, characteristic == .temperatureMeasurement || characteristic == .intermediateTemperature,
            listening[characteristic] == nil
        else { return }
        listening[characteristic] = time
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var out: [PeripheralEmission] = []
        while true {
            let tick = interval * index + .milliseconds(100) + step * stage
            guard tick <= time else { break }
            if stage == 0 { startMeasurement(resultAt: tick + step * Self.intermediateSteps) }
            if stage < Self.intermediateSteps {
                let celsius = target - rise * Double(Self.intermediateSteps - stage) / Double(Self.intermediateSteps)
                let value = IntermediateTemperature(temperature: Self.hundredths(celsius))
                if isListening(to: .intermediateTemperature, at: tick) {
                    out.append(emit(.intermediateTemperature, value.encoded(), at: tick, indication: false))
                }
                stage += 1
            } else {
                let result = TemperatureMeasurement(
                    temperature: Self.hundredths(target), timeStamp: deviceWallTime(clockStart: clockStart, at: tick))
                if isListening(to: .temperatureMeasurement, at: tick) {
                    measurements.append(result)
                    out.append(emit(.temperatureMeasurement, result.encoded(), at: tick, indication: true))
                }
                stage = 0
                index += 1
            }
        }
        return out
    }

    /// Draws the result of the measurement starting now (taken whether or not anyone listens, so that the values
    /// do not depend on the link).
    private mutating func startMeasurement(resultAt time: Duration) {
        target = curve.value(at: SimulationTime.seconds(time)) + generator.uniform(-0.05...0.05)
        rise = generator.uniform(0.3...1.2)
    }

    private func isListening(to characteristic: BluetoothUUID, at time: Duration) -> Bool {
        listening[characteristic].map { $0 <= time } ?? false
    }

    /// `celsius` to the hundredth, as the thermometer sends it.
    static func hundredths(_ celsius: Double) -> MedicalFloat {
        MedicalFloat(celsius, exponent: -2) ?? MedicalFloat(.nan)
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
