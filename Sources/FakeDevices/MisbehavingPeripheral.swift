public import GATT

/// Wraps a simulated peripheral and applies ``PeripheralFaults``: malformed values, duplicates, refusal
/// before pairing, a firmware update that changes the services, silence.
///
/// The ground truth's ``GroundTruth/emissions`` are what actually went out; the values malformed ones
/// replaced are in ``GroundTruth/malformed``. A silent peripheral stops measuring too, so the wrapped
/// peripheral's counters (beats, steps, distance) stay those of the values sent.
public struct MisbehavingPeripheral<Base: SimulatedPeripheral>: SimulatedPeripheral {
    /// The well-behaved peripheral underneath.
    public private(set) var base: Base
    /// The faults applied.
    public let faults: PeripheralFaults
    /// Whether the central paired (see ``PeripheralFaults/requiresPairing``).
    public private(set) var isPaired = false
    private var now: Duration = .zero
    private var count = 0
    private var sent: [PeripheralEmission] = []
    private var malformed: [PeripheralEmission] = []
    private var duplicates = 0

    /// Applies `faults` to `base`.
    public init(_ base: Base, faults: PeripheralFaults) {
        self.base = base
        self.faults = faults
    }

    public var identity: PeripheralIdentity { base.identity }

    /// Whether the firmware update has happened.
    public var isUpdated: Bool { faults.firmwareUpdateAt.map { now >= $0 } ?? false }

    /// After the firmware update the services come in reverse order, so every handle moves.
    public var services: [ServiceDefinition] { isUpdated ? base.services.reversed() : base.services }

    public var requiresPairing: Bool { faults.requiresPairing || base.requiresPairing }

    public var groundTruth: GroundTruth {
        var truth = base.groundTruth
        truth.emissions = sent
        truth.malformed = malformed
        truth.duplicates = duplicates
        return truth
    }

    public mutating func setPaired(_ paired: Bool) {
        isPaired = paired
        base.setPaired(paired)
    }

    public mutating func linkChanged(connected: Bool, at time: Duration) {
        base.linkChanged(connected: connected, at: time)
    }

    public mutating func subscribed(to characteristic: BluetoothUUID, at time: Duration) {
        base.subscribed(to: characteristic, at: time)
    }

    public var wantsToDisconnect: Bool { base.wantsToDisconnect }

    public mutating func read(_ characteristic: BluetoothUUID) throws(ATTError) -> [UInt8] {
        guard !faults.requiresPairing || isPaired else { throw .insufficientAuthentication }
        if isUpdated && characteristic == .firmwareRevisionString {
            return FirmwareRevisionString(faults.updatedFirmwareRevision).encoded()
        }
        return try base.read(characteristic)
    }

    public mutating func write(_ value: [UInt8], to characteristic: BluetoothUUID) throws(ATTError) {
        guard !faults.requiresPairing || isPaired else { throw .insufficientAuthentication }
        try base.write(value, to: characteristic)
    }

    public mutating func advance(to time: Duration) -> [PeripheralEmission] {
        now = max(now, time)
        let limit = faults.silentAfter.map { min($0, now) } ?? now
        var out: [PeripheralEmission] = []
        for emission in base.advance(to: limit) {
            count += 1
            var value = emission
            if let every = faults.malformedEvery, count % every == 0 {
                malformed.append(emission)
                value.value = emission.value.count > 1 ? Array(emission.value.prefix(1)) : []
            }
            out.append(value)
            if let every = faults.duplicateEvery, count % every == 0 {
                out.append(value)
                duplicates += 1
            }
        }
        sent += out
        return out
    }
}
