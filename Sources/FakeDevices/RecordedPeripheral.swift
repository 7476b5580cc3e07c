public import GATT

/// A peripheral that sends again what a real (or simulated) one sent: its notifications at the times they were
/// recorded, its readable values (Device Information, locations, battery) as they were read. `wearhouse
/// fake-bluez --trace` serves one per sensor of a trace, so a recorded session can be lived again end to end
/// through D-Bus and the service.
public struct RecordedPeripheral: SimulatedPeripheral {
    public let identity: PeripheralIdentity
    public let services: [ServiceDefinition]
    public var requiresPairing: Bool { false }
    public private(set) var groundTruth = GroundTruth()
    private let values: [BluetoothUUID: [UInt8]]
    private let emissions: [PeripheralEmission]
    private var next = 0

    /// - Parameters:
    ///   - emissions: what it notified, with times since the start of the recording, oldest first.
    ///   - values: what a read of each characteristic answers; those characteristics are readable.
    public init(identity: PeripheralIdentity, emissions: [PeripheralEmission], values: [BluetoothUUID: [UInt8]]) {
        self.identity = identity
        self.emissions = emissions.sorted { $0.at < $1.at }
        self.values = values
        var byService: [BluetoothUUID: [CharacteristicDefinition]] = [:]
        var order: [BluetoothUUID] = []
        func add(_ uuid: BluetoothUUID, _ properties: CharacteristicProperties) {
            let service = Self.serviceUUID(of: uuid)
            if byService[service] == nil { order.append(service) }
            if let index = byService[service]?.firstIndex(where: { $0.uuid == uuid }) {
                byService[service]?[index].properties.formUnion(properties)
            } else {
                byService[service, default: []].append(CharacteristicDefinition(uuid: uuid, properties: properties))
            }
        }
        for uuid in Set(emissions.map(\.characteristic)).sorted(by: { $0.description < $1.description }) {
            add(uuid, emissions.contains { $0.characteristic == uuid && $0.isIndication } ? .indicate : .notify)
        }
        for uuid in values.keys.sorted(by: { $0.description < $1.description }) { add(uuid, .read) }
        services = order.map { ServiceDefinition(uuid: $0, characteristics: byService[$0] ?? []) }
    }

    /// The standard service a characteristic belongs to (Device Information for the rest).
    public static func serviceUUID(of characteristic: BluetoothUUID) -> BluetoothUUID {
        switch characteristic {
        case .heartRateMeasurement, .bodySensorLocation, .heartRateControlPoint: .heartRateService
        case .rscMeasurement, .rscFeature, .sensorLocation, .scControlPoint: .runningSpeedAndCadenceService
        case .stepCounterActivitySummaryData: .physicalActivityMonitorService
        case .infiniTimeStepCount: .infiniTimeMotionService
        case .batteryLevel: .batteryService
        default: .deviceInformationService
        }
    }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        guard let value = values[characteristic] else { throw .readNotPermitted }
        return value
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        throw .writeNotPermitted
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        var out: [PeripheralEmission] = []
        while next < emissions.count, emissions[next].at <= time {
            out.append(emissions[next])
            next += 1
        }
        groundTruth.emissions += out
        return out
    }
}
