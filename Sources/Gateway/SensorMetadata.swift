public import GATT
public import Health

/// What a connected sensor says about itself: Device Information, where it is worn, RSC features, battery.
/// Read at enrolment and after every connection (firmware can change); every read is optional, since sensors
/// implement different subsets.
public struct SensorMetadata: Hashable, Sendable {
    public var manufacturer: String?
    public var model: String?
    public var serialNumber: String?
    public var hardwareRevision: String?
    public var firmwareRevision: String?
    public var softwareRevision: String?
    /// Body Sensor Location 0x2A38.
    public var bodySensorLocation: UInt8?
    /// RSC Sensor Location 0x2A5D.
    public var sensorLocation: UInt8?
    public var reportsWalkingOrRunning = false
    /// A thermometer's Temperature Type 0x2A1D (1-9), for measurements that do not carry their own.
    public var temperatureType: UInt8?
    public var batteryPercent: Int?
    /// The first read refused for want of pairing (`authentication`) or permission, if any.
    public var refusal: CentralError?

    public init() {}

    /// Reads everything `characteristics` offers of the above from `peripheral`.
    public static func read(
        from peripheral: PeripheralID, characteristics: [CharacteristicInfo], central: any Central
    ) async -> SensorMetadata {
        var metadata = SensorMetadata()
        func bytes(_ uuid: BluetoothUUID) async -> [UInt8]? {
            guard let characteristic = characteristics.first(where: { $0.uuid == uuid }),
                characteristic.properties.contains(.read)
            else { return nil }
            do throws(CentralError) {
                return try await central.read(characteristic, of: peripheral)
            } catch {
                if metadata.refusal == nil, error.kind == .authentication || error.kind == .notPermitted {
                    metadata.refusal = error
                }
                return nil
            }
        }
        func text(_ uuid: BluetoothUUID) async -> String? {
            guard let value = await bytes(uuid) else { return nil }
            let string = String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
            return string.isEmpty ? nil : string
        }
        metadata.manufacturer = await text(.manufacturerNameString)
        metadata.model = await text(.modelNumberString)
        metadata.serialNumber = await text(.serialNumberString)
        metadata.hardwareRevision = await text(.hardwareRevisionString)
        metadata.firmwareRevision = await text(.firmwareRevisionString)
        metadata.softwareRevision = await text(.softwareRevisionString)
        metadata.bodySensorLocation = await bytes(.bodySensorLocation).flatMap {
            try? BodySensorLocation(decoding: $0)
        }?
        .rawValue
        metadata.sensorLocation = await bytes(.sensorLocation).flatMap { try? SensorLocation(decoding: $0) }?.rawValue
        metadata.temperatureType = await bytes(.temperatureType).flatMap { try? TemperatureType(decoding: $0) }
            .flatMap { $0.isReserved ? nil : $0.rawValue }
        if let value = await bytes(.rscFeature), let feature = try? RSCFeature(decoding: value) {
            metadata.reportsWalkingOrRunning = feature.contains(.walkingOrRunningStatusSupported)
        }
        metadata.batteryPercent = await bytes(.batteryLevel).flatMap { try? BatteryLevel(decoding: $0) }.map {
            Int($0.percent)
        }
        return metadata
    }

    /// The device these values describe, with `name` and the BLE address as local identifier; values not read
    /// come from `fallback` (what enrolment recorded).
    public func device(name: String?, address: String, fallback: Device?) -> Device {
        Device(
            name: name ?? fallback?.name, manufacturer: manufacturer ?? fallback?.manufacturer,
            model: model ?? fallback?.model, hardwareVersion: hardwareRevision ?? fallback?.hardwareVersion,
            firmwareVersion: firmwareRevision ?? fallback?.firmwareVersion,
            softwareVersion: softwareRevision ?? fallback?.softwareVersion,
            serialNumber: serialNumber ?? fallback?.serialNumber, localIdentifier: address)
    }
}
