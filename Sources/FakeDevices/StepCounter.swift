public import GATT
internal import Support

/// A simulated PAMS step counter (Physical Activity Monitor 0x183E): every summary interval it indicates a
/// Step Counter Activity Summary Data (0x2B40) with the cumulative normal walking steps of its session, a
/// sequence number, the seconds since the session started, distance (raw, decimetres here) and worn duration.
public struct StepCounter: SimulatedPeripheral {
    /// PAMS Features (0x2B3B): a 64-bit field; bit 38 = Normal Walking Steps supported.
    public static let features: UInt64 = 1 << 38
    /// Decimetres per step, for the raw distance field.
    static let strideDecimeters = 7.0

    /// Address, name and advertised services, from the script.
    public let identity: PeripheralIdentity
    /// What the Device Information service answers.
    public let deviceInformation: DeviceInformationProfile
    /// The PAMS session every summary belongs to, from the seed.
    public let sessionID: UInt16
    /// What was sent and measured so far.
    public private(set) var groundTruth = GroundTruth()

    private let interval: Duration
    private var model: StepModel
    private var battery: BatteryModel
    private var sequence: UInt32 = 0
    private var lastTick: Duration = .zero

    /// Builds the counter from the script's address, name, seed and summary interval.
    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name, advertisedServices: [.physicalActivityMonitorService])
        deviceInformation = DeviceInformationProfile(script: script)
        var generator = SplitMix64(seed: script.seed)
        model = StepModel(generator: &generator)
        sessionID = UInt16(truncatingIfNeeded: generator.next() % 1000 + 1)
        interval = script.summaryInterval
        battery = BatteryModel(seed: script.seed, drainInterval: script.batteryDrainInterval)
    }

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .physicalActivityMonitorService,
                characteristics: [
                    CharacteristicDefinition(uuid: .pamsFeatures, properties: .read),
                    CharacteristicDefinition(uuid: .stepCounterActivitySummaryData, properties: .indicate),
                ]),
            deviceInformation.service, BatteryModel.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .pamsFeatures: return (0..<8).map { UInt8(truncatingIfNeeded: Self.features >> (8 * $0)) }
        case .stepCounterActivitySummaryData: throw .readNotPermitted
        case .batteryLevel: return battery.encoded(at: lastTick)
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
            let tick = interval * Int(sequence + 1)
            guard tick <= time else { break }
            model.run(to: tick)
            sequence += 1
            let steps = model.count
            let summary = StepCounterActivitySummaryData(
                sessionID: sessionID, relativeTimestamp: UInt32(tick.components.seconds), sequenceNumber: sequence,
                normalWalkingSteps: steps, distance: UInt32(Double(steps) * Self.strideDecimeters),
                wornDuration: UInt32(tick.components.seconds))
            groundTruth.steps = steps
            groundTruth.distanceMeters = Double(steps) * Self.strideDecimeters / 10
            out.append(
                PeripheralEmission(
                    characteristic: .stepCounterActivitySummaryData, value: summary.encoded(), at: tick,
                    isIndication: true))
            if let level = battery.emission(at: tick) { out.append(level) }
            lastTick = tick
        }
        groundTruth.emissions += out
        return out
    }
}
