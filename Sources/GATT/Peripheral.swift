/// The peripheral role, simulated: a sensor's GATT database and behaviour, driven by a clock that tests
/// advance. The in-process fake central and FakeBlueZ both serve any ``Peripheral``; real sensors are reached
/// through a ``Central`` instead.
public protocol Peripheral: Sendable {
    /// Address, name and advertised services.
    var identity: PeripheralIdentity { get }
    /// The services and characteristics the peripheral exposes once connected.
    var services: [ServiceDefinition] { get }
    /// Whether the peripheral refuses to serve its data before it is paired.
    var requiresPairing: Bool { get }

    /// Answers a read request.
    mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8]
    /// Takes a write request (and may queue an indication in response).
    mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError)
    /// Runs the peripheral up to `time` (since it was switched on) and returns what it sent meanwhile, oldest
    /// first. Only values on characteristics the central subscribed to are delivered by the caller.
    mutating func advance(to time: Duration) -> [PeripheralEmission]
}

public struct PeripheralIdentity: Hashable, Sendable {
    /// `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    public var name: String
    /// Service UUIDs in the advertisement.
    public var advertisedServices: [BluetoothUUID]
    /// Received signal strength the simulation reports.
    public var rssi: Int16

    public init(
        address: String, addressType: String = "public", name: String, advertisedServices: [BluetoothUUID],
        rssi: Int16 = -60
    ) {
        self.address = address.uppercased()
        self.addressType = addressType
        self.name = name
        self.advertisedServices = advertisedServices
        self.rssi = rssi
    }
}

public struct ServiceDefinition: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var characteristics: [CharacteristicDefinition]
    public init(uuid: BluetoothUUID, characteristics: [CharacteristicDefinition]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

public struct CharacteristicDefinition: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    public init(uuid: BluetoothUUID, properties: CharacteristicProperties) {
        self.uuid = uuid
        self.properties = properties
    }
}

/// A value a simulated peripheral sent at a moment of its own clock.
public struct PeripheralEmission: Hashable, Sendable {
    public var characteristic: BluetoothUUID
    public var value: [UInt8]
    public var at: Duration
    /// Indication (acknowledged) rather than notification.
    public var isIndication: Bool

    public init(characteristic: BluetoothUUID, value: [UInt8], at: Duration, isIndication: Bool = false) {
        self.characteristic = characteristic
        self.value = value
        self.at = at
        self.isIndication = isIndication
    }
}

/// An ATT error a peripheral answers with (read not permitted, 0x80 "control point not supported", ...).
public struct ATTError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: UInt8
    public init(code: UInt8) { self.code = code }

    public static let readNotPermitted = ATTError(code: 0x02)
    public static let writeNotPermitted = ATTError(code: 0x03)
    public static let insufficientAuthentication = ATTError(code: 0x05)
    public static let requestNotSupported = ATTError(code: 0x06)
    public static let attributeNotFound = ATTError(code: 0x0A)
    public static let insufficientEncryption = ATTError(code: 0x0F)
    /// Heart Rate: control point value not supported. RSC/CSC: procedure already in progress.
    public static let applicationError80 = ATTError(code: 0x80)
    /// RSC/CSC: client characteristic configuration descriptor improperly configured.
    public static let applicationError81 = ATTError(code: 0x81)

    public var description: String { "ATT error 0x" + BluetoothUUID.hex(UInt64(code), digits: 2) }
}
