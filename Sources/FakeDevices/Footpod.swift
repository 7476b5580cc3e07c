public import GATT
internal import Support

/// A simulated running footpod (Running Speed and Cadence 0x1814).
///
/// Speed follows a smooth seeded curve between a walk and a run; above 2.2 m/s the pod reports running.
/// Measurements go out about once a second with speed, cadence (steps per minute), stride length and the
/// total distance (1/10 m), which integrates the speed. The SC Control Point answers "set cumulative value"
/// (moves the total distance), "update sensor location", "request supported sensor locations" and refuses
/// calibration, each with an indication.
public struct Footpod: SimulatedPeripheral {
    /// Speed at and above which the pod reports running, m/s.
    public static let runningThreshold = 2.2
    /// The sensor locations the pod accepts.
    public static let supportedLocations: [SensorLocation] = [.topOfShoe, .inShoe, .hip]
    /// What the pod supports: stride, distance, walking/running status, several locations.
    public static let features: RSCFeature = [
        .strideLengthSupported, .totalDistanceSupported, .walkingOrRunningStatusSupported,
        .multipleSensorLocationsSupported,
    ]

    /// Address, name and advertised services, from the script.
    public let identity: PeripheralIdentity
    /// What the Device Information service answers.
    public let deviceInformation: DeviceInformationProfile
    /// What was sent and measured so far.
    public private(set) var groundTruth = GroundTruth()
    /// Sensor Location (0x2A5D): in the shoe until the control point moves it.
    public private(set) var location: SensorLocation = .inShoe

    private let curve: SmoothCurve
    private let phase: Duration
    /// Between two measurements.
    private let interval: Duration
    private var battery: BatteryModel
    private var index = 0
    private var lastTick: Duration = .zero
    /// Total Distance (1/10 m) at the last "set cumulative value", and metres run since then.
    private var distanceBase: UInt32 = 0
    private var distanceSinceBase: Double = 0
    private var steps: Double = 0
    private var queued: [PeripheralEmission] = []

    /// Builds the pod from the script's address, name and seed; faults are applied by ``MisbehavingPeripheral``.
    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name, advertisedServices: [.runningSpeedAndCadenceService])
        deviceInformation = DeviceInformationProfile(script: script)
        var generator = SplitMix64(seed: script.seed)
        let base = generator.uniform(2.0...3.2)
        curve = SmoothCurve(
            generator: &generator, base: base, amplitude: 1.8, periods: [120, 45, 17], range: 0.8...5.5)
        interval = script.measurementInterval
        phase = .milliseconds(Int64(generator.next() % 1000))
        battery = BatteryModel(seed: script.seed, drainInterval: script.batteryDrainInterval)
    }

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .runningSpeedAndCadenceService,
                characteristics: [
                    CharacteristicDefinition(uuid: .rscMeasurement, properties: .notify),
                    CharacteristicDefinition(uuid: .rscFeature, properties: .read),
                    CharacteristicDefinition(uuid: .sensorLocation, properties: .read),
                    CharacteristicDefinition(uuid: .scControlPoint, properties: [.write, .indicate]),
                ]),
            deviceInformation.service, BatteryModel.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .rscMeasurement, .scControlPoint: throw .readNotPermitted
        case .rscFeature: return Self.features.encoded()
        case .sensorLocation: return location.encoded()
        case .batteryLevel: return battery.encoded(at: lastTick)
        default:
            guard let value = deviceInformation.value(of: characteristic) else { throw .attributeNotFound }
            return value
        }
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        guard characteristic == .scControlPoint else { throw .writeNotPermitted }
        guard queued.isEmpty else { throw .applicationError80 }  // procedure already in progress
        let request: SCControlPoint
        do throws(DecodeError) {
            request = try SCControlPoint(decoding: value)
        } catch {
            throw .applicationError80
        }
        let response: SCControlPoint
        switch request {
        case .setCumulativeValue(let total):
            distanceBase = total
            distanceSinceBase = 0
            response = .response(requestOpCode: request.opCode, value: .success, parameter: [])
        case .updateSensorLocation(let new):
            let accepted = Self.supportedLocations.contains(new)
            if accepted { location = new }
            response = .response(
                requestOpCode: request.opCode, value: accepted ? .success : .invalidParameter, parameter: [])
        case .requestSupportedSensorLocations:
            response = .response(
                requestOpCode: request.opCode, value: .success, parameter: Self.supportedLocations.map(\.rawValue))
        case .startSensorCalibration, .response, .reserved:
            response = .response(requestOpCode: request.opCode, value: .opCodeNotSupported, parameter: [])
        }
        queued.append(
            PeripheralEmission(
                characteristic: .scControlPoint, value: response.encoded(), at: lastTick, isIndication: true))
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var out = queued
        queued = []
        while true {
            let tick = phase + interval * index
            guard tick <= time else { break }
            out.append(measurement(at: tick))
            if let level = battery.emission(at: tick) { out.append(level) }
            lastTick = tick
            index += 1
        }
        groundTruth.emissions += out
        return out
    }

    private mutating func measurement(at tick: Duration) -> PeripheralEmission {
        let speed = curve.value(at: SimulationTime.seconds(tick))
        let running = speed >= Self.runningThreshold
        let cadence = running ? 150 + 10 * (speed - Self.runningThreshold) : 95 + 12 * (speed - 0.8)
        let elapsed = SimulationTime.seconds(tick - lastTick)
        distanceSinceBase += speed * elapsed
        groundTruth.distanceMeters += speed * elapsed
        steps += cadence * elapsed / 60
        groundTruth.steps = UInt32(steps)
        let value = RSCMeasurement(
            speed: UInt16((speed * 256).rounded()), cadence: UInt8(cadence.rounded()),
            strideLength: UInt16((speed / (cadence / 60) * 100).rounded()),
            totalDistance: distanceBase &+ UInt32(distanceSinceBase * 10), isRunning: running)
        return PeripheralEmission(characteristic: .rscMeasurement, value: value.encoded(), at: tick)
    }
}
