public import GATT
public import Support
import Synchronization

extension FakeCentral {
    /// Reads from the peripheral. Stale handles (from an earlier resolution) fail as
    /// ``CentralError/Kind/deviceMissing``, ATT errors map to BlueZ's (`NotPermitted`, `NotAuthorized`, `Failed`).
    public func read(_ characteristic: CharacteristicInfo, of peripheral: PeripheralID) async throws(CentralError)
        -> [UInt8]
    {
        try state.withLock { (state) throws(CentralError) in
            let operation = "ReadValue"
            let device = try state.requireCharacteristic(characteristic, of: peripheral, operation)
            guard characteristic.properties.contains(.read) else {
                throw CentralError(
                    .notPermitted, operation: operation, detail: "org.bluez.Error.NotPermitted: Read not permitted")
            }
            if device.peripheral.requiresPairing && !device.paired {
                throw FakeCentralState.error(.insufficientAuthentication, operation)
            }
            do throws(ATTError) {
                return try state.devices[peripheral]?.peripheral.read(characteristic.uuid) ?? []
            } catch {
                throw FakeCentralState.error(error, operation)
            }
        }
    }

    /// Writes, then delivers any indication the peripheral queued in answer. A characteristic that indicates
    /// refuses writes (ATT 0x81) until it is subscribed.
    public func write(
        _ value: [UInt8], to characteristic: CharacteristicInfo, of peripheral: PeripheralID, withResponse: Bool
    ) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            let operation = "WriteValue"
            let device = try state.requireCharacteristic(characteristic, of: peripheral, operation)
            // A command goes out whatever the flags (as BlueZ 5.66 sends it); what the peripheral refuses, or
            // an unpaired link to one that needs pairing, is lost without an answer (FakeBlueZ does the same).
            guard withResponse else {
                if characteristic.properties.contains(.writeWithoutResponse),
                    !device.peripheral.requiresPairing || device.paired
                {
                    try? state.devices[peripheral]?.peripheral.write(value, to: characteristic.uuid)
                    state.flush(peripheral)
                }
                return
            }
            guard characteristic.properties.contains(.write) else {
                throw FakeCentralState.error(.writeNotPermitted, operation)
            }
            if device.peripheral.requiresPairing && !device.paired {
                throw FakeCentralState.error(.insufficientAuthentication, operation)
            }
            // A control point that answers by indication refuses requests while indications are off.
            if characteristic.properties.contains(.indicate) && !device.subscriptions.contains(characteristic.uuid) {
                throw FakeCentralState.error(.applicationError81, operation)
            }
            do throws(ATTError) {
                try state.devices[peripheral]?.peripheral.write(value, to: characteristic.uuid)
            } catch {
                throw FakeCentralState.error(error, operation)
            }
            state.flush(peripheral)
        }
    }

    /// Subscribes by UUID; works while disconnected and survives reconnects (not a stack restart), as
    /// `StartNotify` does. `acquired` is refused on indicate-only characteristics, as BlueZ 5.66 does.
    public func startNotifications(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID, mode: NotifyMode
    ) async throws(CentralError) {
        try state.withLock { (state) throws(CentralError) in
            let operation = mode == .acquired ? "AcquireNotify" : "StartNotify"
            // Like StartNotify, this succeeds while disconnected; the session is restored on reconnect.
            let device = try state.requireCharacteristic(characteristic, of: peripheral, operation, connected: false)
            let allowed: CharacteristicProperties = mode == .acquired ? .notify : [.notify, .indicate]
            guard !characteristic.properties.isDisjoint(with: allowed) else {
                throw CentralError(
                    .notPermitted, operation: operation,
                    detail: "org.bluez.Error.NotSupported: Operation is not supported")
            }
            // The CCCD write is refused on an unpaired, connected link to a peripheral that needs pairing; while
            // disconnected the subscription waits (and delivers nothing until the link is paired).
            if device.connected && device.peripheral.requiresPairing && !device.paired {
                throw FakeCentralState.error(.insufficientAuthentication, operation)
            }
            state.devices[peripheral]?.subscriptions.insert(characteristic.uuid)
        }
    }

    /// Unsubscribes; values the peripheral sends afterwards go nowhere.
    public func stopNotifications(_ characteristic: CharacteristicInfo, of peripheral: PeripheralID)
        async throws(CentralError)
    {
        try state.withLock { (state) throws(CentralError) in
            _ = try state.requireCharacteristic(characteristic, of: peripheral, "StopNotify", connected: false)
            state.devices[peripheral]?.subscriptions.remove(characteristic.uuid)
        }
    }
}
