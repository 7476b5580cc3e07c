public import GATT

/// Characteristics, reads, writes and notifications (R11, R12).
extension BlueZCentral {
    /// The characteristics bluetoothd resolved for `peripheral` (look them up by UUID after every resolve).
    public func characteristics(of peripheral: PeripheralID) async throws(CentralError) -> [CharacteristicInfo] {
        _ = try await devicePath(peripheral, "Characteristics")
        return await cache.characteristics(of: peripheral)
    }

    public func read(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID
    ) async throws(CentralError) -> [UInt8] {
        let reply = try await call(
            characteristic.handle, Self.characteristic1, "ReadValue", [.vardict([:])], timeout: .seconds(10))
        guard reply.count == 1, let bytes = reply[0].looseBytes else {
            throw CentralError(.other, operation: "ReadValue", detail: "reply is not a byte array")
        }
        return bytes
    }

    public func write(
        _ value: [UInt8], to characteristic: CharacteristicInfo, of peripheral: PeripheralID, withResponse: Bool
    ) async throws(CentralError) {
        let options: DBusValue = .vardict(["type": .string(withResponse ? "request" : "command")])
        try await call(
            characteristic.handle, Self.characteristic1, "WriteValue", [.bytes(value), options],
            timeout: .seconds(10))
    }

    /// R11: `StartNotify` (idempotent; bluetoothd keeps the session across reconnects while we stay on the bus);
    /// each `PropertiesChanged(Value)` becomes one ``CentralEvent/notification(_:)``.
    public func startNotifications(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID, mode: NotifyMode
    ) async throws(CentralError) {
        guard mode == .properties else {
            throw CentralError(
                .notPermitted, operation: "AcquireNotify",
                detail: "this build delivers notifications through StartNotify only (notify-mode = properties)")
        }
        let subscription = Subscription(peripheral: peripheral, characteristic: characteristic.uuid)
        let isNew = subscriptions.insert(subscription).inserted
        do throws(CentralError) {
            try await call(characteristic.handle, Self.characteristic1, "StartNotify", timeout: .seconds(10))
        } catch  where error.kind == .inProgress {
            // Our session is being registered by an earlier call.
        } catch {
            if isNew { subscriptions.remove(subscription) }
            throw error
        }
    }

    public func stopNotifications(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID
    ) async throws(CentralError) {
        subscriptions.remove(Subscription(peripheral: peripheral, characteristic: characteristic.uuid))
        try await call(characteristic.handle, Self.characteristic1, "StopNotify", timeout: .seconds(10))
    }
}
