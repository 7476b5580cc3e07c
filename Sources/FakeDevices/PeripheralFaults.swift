/// The ways a simulated peripheral can misbehave, each off by default. Applied by ``MisbehavingPeripheral``.
public struct PeripheralFaults: Hashable, Sendable {
    /// Every Nth value sent is malformed (cut to its first byte, or emptied if it has one byte only).
    public var malformedEvery: Int?
    /// Every Nth value sent is sent twice in a row, identical.
    public var duplicateEvery: Int?
    /// Reads and writes answer ``ATTError/insufficientAuthentication`` until the peripheral is paired.
    public var requiresPairing: Bool
    /// From this moment the peripheral runs new firmware: its services come in a different order (so every
    /// handle changes) and Firmware Revision reads ``updatedFirmwareRevision``.
    public var firmwareUpdateAt: Duration?
    /// The firmware revision after ``firmwareUpdateAt``.
    public var updatedFirmwareRevision: String
    /// After this moment the peripheral sends nothing more (and measures nothing more).
    public var silentAfter: Duration?

    /// Faults as given; every one is off by default.
    public init(
        malformedEvery: Int? = nil, duplicateEvery: Int? = nil, requiresPairing: Bool = false,
        firmwareUpdateAt: Duration? = nil, updatedFirmwareRevision: String = "2.0.0", silentAfter: Duration? = nil
    ) {
        precondition(malformedEvery.map { $0 > 0 } ?? true, "malformedEvery must be positive")
        precondition(duplicateEvery.map { $0 > 0 } ?? true, "duplicateEvery must be positive")
        self.malformedEvery = malformedEvery
        self.duplicateEvery = duplicateEvery
        self.requiresPairing = requiresPairing
        self.firmwareUpdateAt = firmwareUpdateAt
        self.updatedFirmwareRevision = updatedFirmwareRevision
        self.silentAfter = silentAfter
    }

    /// No fault at all.
    public static let none = PeripheralFaults()

    /// Whether no fault is configured.
    public var isEmpty: Bool { self == .none }
}
