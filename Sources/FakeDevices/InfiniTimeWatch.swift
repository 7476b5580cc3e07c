public import GATT
internal import Support

/// A simulated InfiniTime (PineTime) watch: the Heart Rate service (measurements only: no RR, contact not
/// supported, no location), InfiniTime's Motion Service step count (uint32, read + notify, notified each
/// second the count changed), Device Information and Battery.
public struct InfiniTimeWatch: SimulatedPeripheral {
    static let heartProfile = HeartRateSensor.Profile(
        sendsRRIntervals: false, reportsContact: false, sendsEnergyExpended: false, location: nil)

    /// Address, name and advertised services, from the script.
    public let identity: PeripheralIdentity
    private var heart: HeartRateSensor
    private var model: StepModel
    private var second = 0
    private var lastSteps: UInt32 = 0
    private var emissions: [PeripheralEmission] = []

    /// Builds the watch from the script's address, name and seed.
    public init(script: PeripheralScript) {
        heart = HeartRateSensor(
            script: script, profile: Self.heartProfile,
            advertisedServices: [.heartRateService, .infiniTimeMotionService])
        identity = heart.identity
        var generator = SplitMix64(seed: script.seed ^ 0x57E9)
        model = StepModel(generator: &generator)
    }

    /// What the Device Information service answers.
    public var deviceInformation: DeviceInformationProfile { heart.deviceInformation }

    /// What was sent and measured so far; ``GroundTruth/steps`` is the last step count sent.
    public var groundTruth: GroundTruth {
        var truth = heart.groundTruth
        truth.emissions = emissions
        truth.steps = lastSteps
        return truth
    }

    public var services: [ServiceDefinition] {
        var services = heart.services
        services.insert(
            ServiceDefinition(
                uuid: .infiniTimeMotionService,
                characteristics: [CharacteristicDefinition(uuid: .infiniTimeStepCount, properties: [.read, .notify])]),
            at: 1)
        return services
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        if characteristic == .infiniTimeStepCount { return InfiniTimeStepCount(steps: lastSteps).encoded() }
        return try heart.read(characteristic)
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        try heart.write(value, to: characteristic)
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var steps: [PeripheralEmission] = []
        while Duration.seconds(second + 1) <= time {
            second += 1
            let tick = Duration.seconds(second)
            model.run(to: tick)
            if model.count != lastSteps {
                lastSteps = model.count
                steps.append(
                    PeripheralEmission(
                        characteristic: .infiniTimeStepCount, value: InfiniTimeStepCount(steps: lastSteps).encoded(),
                        at: tick))
            }
        }
        // Both lists are in time order; merge them, heart first at equal times.
        let beats = heart.advance(to: time)
        var out: [PeripheralEmission] = []
        out.reserveCapacity(beats.count + steps.count)
        var i = 0
        var j = 0
        while i < beats.count || j < steps.count {
            if j == steps.count || (i < beats.count && beats[i].at <= steps[j].at) {
                out.append(beats[i])
                i += 1
            } else {
                out.append(steps[j])
                j += 1
            }
        }
        emissions += out
        return out
    }
}
