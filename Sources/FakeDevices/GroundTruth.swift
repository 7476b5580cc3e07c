public import GATT

/// What a simulated peripheral really sent and measured, for tests and the demo to compare against what the
/// layers above stored ("the store holds exactly what the sensors sent").
///
/// Fields a peripheral does not model stay at their zero value.
public struct GroundTruth: Hashable, Sendable {
    /// Every value sent, notifications and indications, oldest first, exactly as sent (malformed and
    /// duplicated ones included).
    public var emissions: [PeripheralEmission] = []
    /// Heart rates sent, bpm, one per Heart Rate Measurement.
    public var heartRates: [UInt16] = []
    /// Every RR interval sent, 1/1024 s, oldest first. Each beat is sent exactly once.
    public var rrIntervals: [UInt16] = []
    /// Energy expended since the last reset, kJ, unsaturated (the wire value stops at 0xFFFF).
    public var energyExpended: Double = 0
    /// Steps taken (cumulative; for a footpod, cadence integrated over time).
    public var steps: UInt32 = 0
    /// Distance covered since switch-on, metres (not moved by SC Control Point "set cumulative value").
    public var distanceMeters: Double = 0
    /// The values a fault replaced with malformed bytes, as they would have been sent.
    public var malformed: [PeripheralEmission] = []
    /// How many emissions a fault sent twice.
    public var duplicates: Int = 0

    /// Nothing sent yet.
    public init() {}

    /// Beats whose RR interval was sent.
    public var beats: Int { rrIntervals.count }

    /// A fitness machine's sessions as it reported them (``Treadmill``), oldest first.
    public var machineSessions: [MachineSession] = []

    /// One session on a fitness machine: when its status said it started, paused, resumed and stopped (on the
    /// peripheral's clock), and the totals it sent last (metres and kcal since the session started).
    public struct MachineSession: Hashable, Sendable {
        public var start: Duration
        public var pausedAt: Duration?
        public var resumedAt: Duration?
        /// `nil` while the session runs.
        public var end: Duration?
        public var distanceMeters: UInt32 = 0
        public var energyKilocalories: UInt16 = 0

        public init(start: Duration) {
            self.start = start
        }

        /// The time the belt ran, seconds (the pause left out); `nil` while the session runs.
        public var activeSeconds: Double? {
            guard let end else { return nil }
            let paused = pausedAt.flatMap { from in resumedAt.map { SimulationTime.seconds($0 - from) } } ?? 0
            return SimulationTime.seconds(end - start) - paused
        }
    }
}

/// A ``Peripheral`` the simulation drives, which also tells what it sent.
public protocol SimulatedPeripheral: Peripheral {
    /// Everything sent and measured up to the last ``Peripheral/advance(to:)``.
    var groundTruth: GroundTruth { get }
    /// Told by the central when pairing succeeded (or the bond was removed). Most peripherals ignore it.
    mutating func setPaired(_ paired: Bool)
    /// Told by FakeBlueZ when the link comes up or goes down. A health device that stores readings while
    /// nobody listens uses it; most peripherals ignore it.
    mutating func linkChanged(connected: Bool, at time: Duration)
    /// Told by FakeBlueZ when a client enables notifications or indications of `characteristic` (StartNotify,
    /// again after every reconnect). Stored readings go out at the next ``Peripheral/advance(to:)``.
    mutating func subscribed(to characteristic: BluetoothUUID, at time: Duration)
    /// Whether the peripheral ends the link itself now (a cuff after its measurement); FakeBlueZ disconnects it
    /// after delivering what it sent.
    var wantsToDisconnect: Bool { get }
}

extension SimulatedPeripheral {
    /// Ignores pairing.
    public mutating func setPaired(_ paired: Bool) {}
    /// Ignores the link.
    public mutating func linkChanged(connected: Bool, at time: Duration) {}
    /// Ignores subscriptions.
    public mutating func subscribed(to characteristic: BluetoothUUID, at time: Duration) {}
    /// Never ends the link itself.
    public var wantsToDisconnect: Bool { false }
}

extension Peripheral {
    /// What a write to `characteristic` gets where the peripheral takes none: "write not permitted" for one of its
    /// own characteristics, "attribute not found" for any other.
    func writeRefusal(_ characteristic: BluetoothUUID) -> ATTError {
        services.contains { $0.characteristics.contains { $0.uuid == characteristic } }
            ? .writeNotPermitted : .attributeNotFound
    }
}
