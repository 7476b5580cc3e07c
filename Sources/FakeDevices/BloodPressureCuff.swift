public import GATT
internal import Support

/// A simulated blood pressure cuff (Blood Pressure service 0x1810).
///
/// Once a client has enabled its indications on a connection, it measures: it notifies an Intermediate Cuff
/// Pressure a second apart as the cuff deflates (from 160 mmHg down by 20), then indicates one Blood Pressure
/// Measurement (systolic, diastolic, mean arterial pressure, its time stamp, pulse rate, user 1 and a status)
/// and ends the link itself, as cuffs do. It measures at most ``PeripheralScript/measurementCount`` times, once
/// per connection; later connections get nothing.
public struct BloodPressureCuff: SimulatedPeripheral {
    public let identity: PeripheralIdentity
    public let deviceInformation: DeviceInformationProfile
    public private(set) var groundTruth = GroundTruth()
    /// The results sent, oldest first.
    public private(set) var measurements: [BloodPressureMeasurement] = []

    private let clockStart: Int64
    private let remainingAtStart: Int
    private var generator: SplitMix64
    private var connected = false
    /// When the current measurement started (indications enabled), while one runs.
    private var startedAt: Duration?
    private var steps = 0
    private var disconnecting = false

    /// Intermediate pressures before the result.
    static let intermediateSteps = 5

    public init(script: PeripheralScript) {
        identity = PeripheralIdentity(
            address: script.address, name: script.name, advertisedServices: [.bloodPressureService])
        deviceInformation = DeviceInformationProfile(script: script)
        generator = SplitMix64(seed: script.seed)
        clockStart = script.clockStart
        remainingAtStart = script.measurementCount
    }

    public static let feature: BloodPressureFeature = [.bodyMovementDetection, .cuffFitDetection]

    public var services: [ServiceDefinition] {
        [
            ServiceDefinition(
                uuid: .bloodPressureService,
                characteristics: [
                    CharacteristicDefinition(uuid: .bloodPressureMeasurement, properties: .indicate),
                    CharacteristicDefinition(uuid: .intermediateCuffPressure, properties: .notify),
                    CharacteristicDefinition(uuid: .bloodPressureFeature, properties: .read),
                ]),
            deviceInformation.service,
        ]
    }

    public var requiresPairing: Bool { false }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        switch characteristic {
        case .bloodPressureFeature: return Self.feature.encoded()
        case .bloodPressureMeasurement, .intermediateCuffPressure: throw .readNotPermitted
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
        if !connected {
            // A measurement cut short by the link is abandoned (the cuff shows an error), not resumed.
            startedAt = nil
            disconnecting = false
        }
    }

    public mutating func subscribed(to characteristic: BluetoothUUID, at time: Duration) {
        guard characteristic == .bloodPressureMeasurement, connected, startedAt == nil,
            measurements.count < remainingAtStart
        else { return }
        startedAt = time
        steps = 0
    }

    public var wantsToDisconnect: Bool { disconnecting }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        guard let start = startedAt, !disconnecting else { return [] }
        var out: [PeripheralEmission] = []
        while steps <= Self.intermediateSteps {
            let tick = start + .seconds(steps + 1)
            guard tick <= time else { break }
            if steps < Self.intermediateSteps {
                let pressure = IntermediateCuffPressure(cuffPressure: SFloat(mantissa: 160 - 20 * steps)!)
                out.append(emit(.intermediateCuffPressure, pressure.encoded(), at: tick, indication: false))
            } else {
                let result = takeMeasurement(at: tick)
                measurements.append(result)
                out.append(emit(.bloodPressureMeasurement, result.encoded(), at: tick, indication: true))
                startedAt = nil
                disconnecting = true
            }
            steps += 1
        }
        return out
    }

    private mutating func takeMeasurement(at time: Duration) -> BloodPressureMeasurement {
        let systolic = 110 + Int(generator.next() % 30)
        let diastolic = 65 + Int(generator.next() % 20)
        let pulse = 55 + Int(generator.next() % 30)
        return BloodPressureMeasurement(
            systolic: SFloat(mantissa: systolic)!, diastolic: SFloat(mantissa: diastolic)!,
            meanArterialPressure: SFloat(mantissa: (systolic + 2 * diastolic) / 3)!,
            timeStamp: deviceWallTime(clockStart: clockStart, at: time), pulseRate: SFloat(mantissa: pulse)!,
            userID: 1, status: BloodPressureStatus(rawValue: 0))
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
