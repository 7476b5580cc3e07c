public import GATT
internal import Support

/// The Device Information service (0x180A) of a simulated peripheral: six strings, System ID and PnP ID.
public struct DeviceInformationProfile: Hashable, Sendable {
    /// Manufacturer Name String (0x2A29).
    public var manufacturer: String
    /// Model Number String (0x2A24).
    public var model: String
    /// Serial Number String (0x2A25).
    public var serialNumber: String
    /// Firmware Revision String (0x2A26).
    public var firmwareRevision: String
    /// Hardware Revision String (0x2A27).
    public var hardwareRevision: String
    /// Software Revision String (0x2A28).
    public var softwareRevision: String
    /// System ID (0x2A23).
    public var systemID: SystemID
    /// PnP ID (0x2A50).
    public var pnpID: PnPID

    /// Explicit values, for a scenario that imitates a particular device.
    public init(
        manufacturer: String, model: String, serialNumber: String, firmwareRevision: String,
        hardwareRevision: String, softwareRevision: String, systemID: SystemID, pnpID: PnPID
    ) {
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.firmwareRevision = firmwareRevision
        self.hardwareRevision = hardwareRevision
        self.softwareRevision = softwareRevision
        self.systemID = systemID
        self.pnpID = pnpID
    }

    /// The values a script's peripheral reports: the serial number and System ID come from the seed.
    public init(script: PeripheralScript) {
        var generator = SplitMix64(seed: script.seed ^ 0x5EED_D15)
        let serial = generator.next() % 100_000_000
        let productID = UInt16(truncatingIfNeeded: PeripheralScript.Kind.allCases.firstIndex(of: script.kind) ?? 0)
        self.init(
            manufacturer: "Wearhouse Fakes", model: script.kind.rawValue,
            serialNumber: "FK" + String(serial), firmwareRevision: "1.4.2", hardwareRevision: "rev-b",
            softwareRevision: "sim-1",
            systemID: SystemID(
                manufacturerIdentifier: 0xFE_0000_0000 | (generator.next() & 0xFF_FFFF),
                organizationallyUniqueIdentifier: 0x00_1A_7D),
            pnpID: PnPID(vendorIDSource: 1, vendorID: 0x05F1, productID: 0x0100 + productID, productVersion: 0x0142))
    }

    /// The service definition: every characteristic read-only.
    public var service: ServiceDefinition {
        ServiceDefinition(
            uuid: .deviceInformationService,
            characteristics: Self.characteristics.map { CharacteristicDefinition(uuid: $0, properties: .read) })
    }

    static let characteristics: [BluetoothUUID] = [
        .manufacturerNameString, .modelNumberString, .serialNumberString, .hardwareRevisionString,
        .firmwareRevisionString, .softwareRevisionString, .systemID, .pnpID,
    ]

    /// The encoded value of `characteristic`, or `nil` when it is not a Device Information characteristic.
    public func value(of characteristic: BluetoothUUID) -> [UInt8]? {
        switch characteristic {
        case .manufacturerNameString: ManufacturerNameString(manufacturer).encoded()
        case .modelNumberString: ModelNumberString(model).encoded()
        case .serialNumberString: SerialNumberString(serialNumber).encoded()
        case .hardwareRevisionString: HardwareRevisionString(hardwareRevision).encoded()
        case .firmwareRevisionString: FirmwareRevisionString(firmwareRevision).encoded()
        case .softwareRevisionString: SoftwareRevisionString(softwareRevision).encoded()
        case .systemID: systemID.encoded()
        case .pnpID: pnpID.encoded()
        default: nil
        }
    }
}
