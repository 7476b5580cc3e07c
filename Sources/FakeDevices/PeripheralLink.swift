public import GATT

/// What a peripheral served through a real bluetoothd (``PeripheralHost``) is told of its link, as FakeBlueZ tells
/// the peripherals it serves. The link is up while a central is connected and the sensor is not paused: a paused
/// sensor is out of contact (the BlueZ VM rig pauses sensors to compare what was sent with what was stored,
/// docs/bluez-vm.md). When the link comes up, the peripheral hears again of each characteristic a central is
/// subscribed to (bluetoothd keeps a bonded central's subscription across links). So a health device keeps what it
/// measures while nobody listens and sends it once its link is up and subscribed again.
public struct PeripheralLink: Hashable, Sendable {
    /// Whether the peripheral was last told its link is up.
    public private(set) var isUp = false

    public init() {}

    /// Tells `peripheral` at `time` when its link went up (`connected` and not `paused`) or down since the last
    /// update; on the way up, of each of `subscriptions` again. Returns whether the link is up: whether what the
    /// peripheral sends now may go out.
    public mutating func update(
        _ peripheral: inout some SimulatedPeripheral, connected: Bool, paused: Bool,
        subscriptions: Set<BluetoothUUID>, at time: Duration
    ) -> Bool {
        let up = connected && !paused
        guard up != isUp else { return up }
        isUp = up
        peripheral.linkChanged(connected: up, at: time)
        if up {
            for uuid in subscriptions.sorted(by: { $0.description < $1.description }) {
                peripheral.subscribed(to: uuid, at: time)
            }
        }
        return up
    }

    /// A central subscribed to `characteristic` at `time`: the peripheral hears of it now when its link is up, else
    /// when the link comes up (``update(_:connected:paused:subscriptions:at:)``).
    public func subscribed(
        _ peripheral: inout some SimulatedPeripheral, to characteristic: BluetoothUUID, at time: Duration
    ) {
        if isUp { peripheral.subscribed(to: characteristic, at: time) }
    }
}
