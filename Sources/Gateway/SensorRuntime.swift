internal import Foundation
internal import GATT
internal import Health

/// Everything the service keeps for one enrolled sensor: its registry entry, its state machine, its sample
/// builder and what it has done. A value inside ``GatewayService``; only the service's actor touches it.
struct SensorRuntime {
    var registered: RegisteredSensor
    var state: SensorSessionState
    var builder: SampleBuilder
    /// The characteristics subscribed in this connection (valid until the next resolve, `docs/bluez.md`, R12).
    var subscribed: [CharacteristicInfo] = []
    var adapter: AdapterAddress?
    var battery: Int?
    var notifications: Int64 = 0
    var samples: Int64 = 0
    var lastSampleAt: Instant?

    var address: String { registered.address }

    func peripheral(defaultAdapter: AdapterAddress?) -> PeripheralID? {
        guard let adapter = adapter ?? registered.adapter ?? defaultAdapter else { return nil }
        return PeripheralID(adapter: adapter, address: registered.address)
    }

    func matches(_ id: PeripheralID) -> Bool {
        id.address == registered.address && (registered.adapter.map { $0.uppercased() == id.adapter } ?? true)
    }

    /// What `wearhouse sensors` shows, as of `updatedAt`. `dropped` is 0 by construction: the writer holds samples back
    /// (backpressure) instead of dropping them, and the event streams are unbounded; the status field is there
    /// for engines or future paths that could drop, so that a drop would be visible rather than silent.
    func status(at updatedAt: Instant) -> SensorStatus {
        SensorStatus(
            address: address, state: stateDescription, batteryPercent: battery, lastSampleAt: lastSampleAt,
            notifications: notifications, samples: samples, malformed: Int64(builder.counters.malformed), dropped: 0,
            reconnects: Int64(state.reconnects), updatedAt: updatedAt)
    }

    var stateDescription: String {
        guard let failure = state.lastFailure, state.phase != .streaming else { return state.phase.name }
        return "\(state.phase.name) (last error: \(failure.rawValue))"
    }
}
