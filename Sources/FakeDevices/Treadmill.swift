public import GATT
internal import Support

/// A simulated treadmill (Fitness Machine service 0x1826) that runs sessions and reports them.
///
/// Switched on, it waits a few seconds, then runs sessions one after another: Fitness Machine Status "started",
/// a first stretch, "paused", a pause with the belt stopped, "started" (resumed), a second stretch, "stopped",
/// then a rest before the next session. It notifies Treadmill Data once a second: speed (0.01 km/h, from a smooth
/// seeded curve around the session's pace, a walk or a run; 0 while the belt stands), total distance (uint24 m
/// since the session started), inclination and ramp angle, total energy (kcal since the session started) and
/// elapsed time (s of belt time). Between sessions it keeps sending the last session's totals at speed 0; each
/// session starts its totals from zero. Lengths, paces and inclines come
/// from the seed; ``GroundTruth/machineSessions`` records each session as sent.
public struct Treadmill: SimulatedPeripheral {
    /// Distance, inclination, energy and elapsed time; speed and inclination targets.
    public static let features = FitnessMachineFeature(
        machine: [.totalDistance, .inclination, .expendedEnergy, .elapsedTime],
        targetSettings: [.speed, .inclination])
    /// kcal per km per kg (walking and running cost about 1 kcal/kg/km), for a 70 kg runner.
    public static let kilocaloriesPerKilometre = 70.0

    public let identity: PeripheralIdentity
    public let deviceInformation: DeviceInformationProfile
    public private(set) var groundTruth = GroundTruth()

    private enum State {
        case idle(untilTick: Int)
        case running(untilTick: Int, second: Bool)
        case paused(untilTick: Int)
    }

    private var generator: SplitMix64
    private let speedCurve: SmoothCurve
    private let inclineCurve: SmoothCurve
    private let phase: Duration
    private let interval: Duration
    private var battery: BatteryModel
    private var index = 0
    private var lastTick: Duration = .zero
    private var state: State
    /// The current session's pace factor (a walk near 0.5, a run near 1.2) and totals.
    private var pace = 1.0
    private var distance = 0.0
    private var beltSeconds = 0
    private var secondStretch = 0
    private var pauseTicks = 0
    private var queued: [PeripheralEmission] = []

    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name, advertisedServices: [.fitnessMachineService])
        deviceInformation = DeviceInformationProfile(script: script)
        var generator = SplitMix64(seed: script.seed)
        speedCurve = SmoothCurve(generator: &generator, base: 1, amplitude: 0.15, periods: [60, 19], range: 0.6...1.4)
        inclineCurve = SmoothCurve(generator: &generator, base: 2, amplitude: 2.5, periods: [80, 27], range: 0...8)
        interval = script.measurementInterval
        phase = .milliseconds(Int64(generator.next() % 1000))
        state = .idle(untilTick: 3 + Int(generator.next() % 5))
        self.generator = generator
        battery = BatteryModel(seed: script.seed, drainInterval: script.batteryDrainInterval)
    }

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .fitnessMachineService,
                characteristics: [
                    CharacteristicDefinition(uuid: .fitnessMachineFeature, properties: .read),
                    CharacteristicDefinition(uuid: .treadmillData, properties: .notify),
                    CharacteristicDefinition(uuid: .fitnessMachineStatus, properties: .notify),
                ]),
            deviceInformation.service, BatteryModel.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .treadmillData, .fitnessMachineStatus: throw .readNotPermitted
        case .fitnessMachineFeature: return Self.features.encoded()
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
        var out = queued
        queued = []
        while true {
            let tick = phase + interval * index
            guard tick <= time else { break }
            out += step(at: tick)
            if let level = battery.emission(at: tick) { out.append(level) }
            lastTick = tick
            index += 1
        }
        groundTruth.emissions += out
        return out
    }

    /// The belt speed at `tick`, m/s: around 1.6 m/s for a walk, 3 m/s for a run.
    private func speed(at tick: Duration) -> Double {
        2.5 * pace * speedCurve.value(at: SimulationTime.seconds(tick))
    }

    private mutating func step(at tick: Duration) -> [PeripheralEmission] {
        switch state {
        case .idle(let until):
            guard index >= until else { return [data(at: tick, belt: 0)] }
            // A new session: a walk or a run, two stretches of 30-60 ticks and a pause of 5-15 between.
            pace = generator.next() % 2 == 0 ? 0.62 : 1.25
            distance = 0
            beltSeconds = 0
            let first = 30 + Int(generator.next() % 31)
            secondStretch = 30 + Int(generator.next() % 31)
            pauseTicks = 5 + Int(generator.next() % 11)
            state = .running(untilTick: index + first, second: false)
            groundTruth.machineSessions.append(GroundTruth.MachineSession(start: tick))
            return [status(.startedOrResumedByUser, at: tick), data(at: tick)]
        case .running(let until, let second):
            distance += speed(at: tick) * SimulationTime.seconds(interval)
            beltSeconds += 1
            let sent = data(at: tick)
            guard index >= until else { return [sent] }
            if second {
                state = .idle(untilTick: index + 10 + Int(generator.next() % 11))
                finishSession(at: tick)
                return [sent, status(.stoppedOrPausedByUser, parameter: [1], at: tick)]
            }
            state = .paused(untilTick: index + pauseTicks)
            groundTruth.machineSessions[groundTruth.machineSessions.count - 1].pausedAt = tick
            return [sent, status(.stoppedOrPausedByUser, parameter: [2], at: tick)]
        case .paused(let until):
            guard index >= until else { return [data(at: tick, belt: 0)] }
            state = .running(untilTick: index + secondStretch, second: true)
            let last = groundTruth.machineSessions.count - 1
            groundTruth.machineSessions[last].resumedAt = tick
            return [status(.startedOrResumedByUser, at: tick), data(at: tick)]
        }
    }

    private mutating func finishSession(at tick: Duration) {
        let last = groundTruth.machineSessions.count - 1
        groundTruth.machineSessions[last].end = tick
        groundTruth.machineSessions[last].distanceMeters = UInt32(distance.rounded(.down))
        groundTruth.machineSessions[last].energyKilocalories = UInt16(energy)
    }

    private var energy: Double { (distance / 1000 * Self.kilocaloriesPerKilometre).rounded(.down) }

    private mutating func data(at tick: Duration) -> PeripheralEmission {
        data(at: tick, belt: speed(at: tick))
    }

    /// Treadmill Data with the belt at `belt` m/s.
    private func data(at tick: Duration, belt: Double) -> PeripheralEmission {
        let incline = (inclineCurve.value(at: SimulationTime.seconds(tick)) * 10).rounded()
        let value = TreadmillData(
            instantaneousSpeed: UInt16((belt * 360).rounded()), totalDistance: UInt32(distance.rounded(.down)),
            incline: TreadmillData.Incline(inclination: Int16(incline), rampAngle: Int16((incline * 0.57).rounded())),
            common: FitnessMachineCommon(
                energy: FitnessMachineEnergy(total: UInt16(min(energy, 0xFFFE))),
                elapsedTime: UInt16(truncatingIfNeeded: beltSeconds)))
        return PeripheralEmission(characteristic: .treadmillData, value: value.encoded(), at: tick)
    }

    private func status(
        _ opCode: FitnessMachineStatus.OpCode, parameter: [UInt8] = [], at tick: Duration
    ) -> PeripheralEmission {
        PeripheralEmission(
            characteristic: .fitnessMachineStatus,
            value: FitnessMachineStatus(opCode, parameter: parameter).encoded(), at: tick)
    }
}
