import GATT

/// A battery that starts between 90 and 100 % (from the seed) and loses 1 % per drain interval. Its level is
/// read, and notified when it changes.
struct BatteryModel: Hashable, Sendable {
    var startLevel: UInt8
    var drainInterval: Duration
    /// The level last notified.
    var lastNotified: UInt8

    init(seed: UInt64, drainInterval: Duration) {
        startLevel = 100 - UInt8(seed % 11)
        self.drainInterval = drainInterval
        lastNotified = startLevel
    }

    func level(at time: Duration) -> UInt8 {
        let drained = max(0, Int(time / drainInterval))
        return UInt8(max(0, Int(startLevel) - drained))
    }

    func encoded(at time: Duration) -> [UInt8] {
        BatteryLevel(percent: level(at: time)).map { $0.encoded() } ?? [level(at: time)]
    }

    /// A notification when the level changed since the last one.
    mutating func emission(at time: Duration) -> PeripheralEmission? {
        let level = level(at: time)
        guard level != lastNotified else { return nil }
        lastNotified = level
        return PeripheralEmission(characteristic: .batteryLevel, value: encoded(at: time), at: time)
    }

    static let service = ServiceDefinition(
        uuid: .batteryService,
        characteristics: [CharacteristicDefinition(uuid: .batteryLevel, properties: [.read, .notify])])
}
