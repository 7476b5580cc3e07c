public import GATT
internal import Support

/// A simulated fingertip pulse oximeter (Pulse Oximeter service 0x1822).
///
/// SpO2, pulse rate and perfusion (the pulse amplitude index) follow smooth seeded curves, about 92-100 %,
/// 45-100 bpm and 0.5-6 %. Every ``PeripheralScript/measurementInterval`` (a second by default) it notifies a PLX
/// Continuous Measurement: the normal-response SpO2 and pulse rate in whole units, "validated data" as its
/// measurement status and the pulse amplitude index to a tenth of a percent. Every
/// ``PeripheralScript/summaryInterval`` it also completes a spot-check, half a measurement interval after a
/// continuous value, and indicates a PLX Spot-check Measurement of the values at that moment with its own time
/// stamp, its clock set to ``PeripheralScript/clockStart`` at switch-on. Like a heart-rate sensor it measures
/// whether or not anyone listens (FakeBlueZ delivers what a client subscribed to); it keeps no spot-checks for
/// later, as its PLX Features say.
public struct PulseOximeter: SimulatedPeripheral {
    /// Measurement status on every value: validated data (bit 7).
    public static let status = PLXMeasurementStatus(rawValue: 0x0080)
    /// Spot-check time stamps and the pulse amplitude index; the measurement status bits it sets.
    public static let features = PLXFeatures(
        otherFeatures: 0x0008 | 0x0040, measurementStatusSupport: status.rawValue)

    public let identity: PeripheralIdentity
    public let deviceInformation: DeviceInformationProfile
    public private(set) var groundTruth = GroundTruth()
    /// The continuous measurements sent, oldest first.
    public private(set) var continuous: [PLXContinuousMeasurement] = []
    /// The spot-checks sent, oldest first.
    public private(set) var spotChecks: [PLXSpotCheckMeasurement] = []

    private let saturation: SmoothCurve
    private let pulse: SmoothCurve
    private let perfusion: SmoothCurve
    private let phase: Duration
    private let interval: Duration
    private let spotInterval: Duration
    private let clockStart: Int64
    private var index = 0
    private var spotIndex = 1

    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name, advertisedServices: [.pulseOximeterService])
        deviceInformation = DeviceInformationProfile(script: script)
        var generator = SplitMix64(seed: script.seed)
        let percent = generator.uniform(95.5...98.5)
        saturation = SmoothCurve(
            generator: &generator, base: percent, amplitude: 2, periods: [120, 41], range: 92...100)
        let bpm = generator.uniform(58...82)
        pulse = SmoothCurve(generator: &generator, base: bpm, amplitude: 12, periods: [90, 29, 11], range: 45...100)
        let index = generator.uniform(1.5...4.5)
        perfusion = SmoothCurve(generator: &generator, base: index, amplitude: 1.2, periods: [60, 17], range: 0.5...6)
        phase = .milliseconds(Int64(generator.next() % 1000))
        interval = script.measurementInterval
        spotInterval = script.summaryInterval
        clockStart = script.clockStart
    }

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .pulseOximeterService,
                characteristics: [
                    CharacteristicDefinition(uuid: .plxSpotCheckMeasurement, properties: .indicate),
                    CharacteristicDefinition(uuid: .plxContinuousMeasurement, properties: .notify),
                    CharacteristicDefinition(uuid: .plxFeatures, properties: .read),
                ]),
            deviceInformation.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .plxFeatures: return Self.features.encoded()
        case .plxSpotCheckMeasurement, .plxContinuousMeasurement: throw .readNotPermitted
        default:
            guard let value = deviceInformation.value(of: characteristic) else { throw .attributeNotFound }
            return value
        }
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        throw writeRefusal(characteristic)
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var out: [PeripheralEmission] = []
        while true {
            let next = phase + interval * index
            let spot = phase + spotInterval * spotIndex + interval / 2
            if next <= spot {
                guard next <= time else { break }
                let values = self.values(at: next)
                let measurement = PLXContinuousMeasurement(
                    normal: .init(spo2: values.spo2, pulseRate: values.pulseRate), measurementStatus: Self.status,
                    pulseAmplitudeIndex: values.perfusion)
                continuous.append(measurement)
                out.append(
                    PeripheralEmission(
                        characteristic: .plxContinuousMeasurement, value: measurement.encoded(), at: next))
                index += 1
            } else {
                guard spot <= time else { break }
                let values = self.values(at: spot)
                let measurement = PLXSpotCheckMeasurement(
                    spo2: values.spo2, pulseRate: values.pulseRate,
                    timeStamp: deviceWallTime(clockStart: clockStart, at: spot), measurementStatus: Self.status,
                    pulseAmplitudeIndex: values.perfusion)
                spotChecks.append(measurement)
                out.append(
                    PeripheralEmission(
                        characteristic: .plxSpotCheckMeasurement, value: measurement.encoded(), at: spot,
                        isIndication: true))
                spotIndex += 1
            }
        }
        groundTruth.emissions += out
        return out
    }

    /// SpO2 and pulse rate in whole units, the pulse amplitude index to a tenth, at `time` since switch-on.
    private func values(at time: Duration) -> (spo2: SFloat, pulseRate: SFloat, perfusion: SFloat?) {
        let seconds = SimulationTime.seconds(time)
        return (
            SFloat(saturation.value(at: seconds).rounded(), exponent: 0) ?? SFloat(.nan),
            SFloat(pulse.value(at: seconds).rounded(), exponent: 0) ?? SFloat(.nan),
            SFloat(perfusion.value(at: seconds), exponent: -1)
        )
    }
}
