internal import DBus
public import GATT
public import Support

/// Characteristics, reads, writes and notifications (`docs/bluez.md`, R11, R12).
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

    /// R11: `StartNotify` (idempotent; bluetoothd keeps the session across reconnects while we stay on the bus),
    /// each `PropertiesChanged(Value)` becoming one ``CentralEvent/notification(_:)``; or, with `.acquired`,
    /// `AcquireNotify`: a socket per characteristic read on its own thread, one datagram per notification, to be
    /// acquired again after every reconnection (the socket hangs up when the link drops).
    public func startNotifications(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID, mode: NotifyMode
    ) async throws(CentralError) {
        let subscription = Subscription(peripheral: peripheral, characteristic: characteristic.uuid)
        if mode == .acquired {
            try await acquire(characteristic, subscription)
            return
        }
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

    private func acquire(_ characteristic: CharacteristicInfo, _ subscription: Subscription) async throws(CentralError)
    {
        if acquired[subscription] != nil { return }
        let reply = try await call(
            characteristic.handle, Self.characteristic1, "AcquireNotify", [.vardict([:])], timeout: .seconds(10))
        guard reply.count == 2, case .unixFD(let descriptor) = reply[0].unwrapped, let mtu = reply[1].looseInteger
        else {
            throw CentralError(.other, operation: "AcquireNotify", detail: "reply is not (h fd, q mtu)")
        }
        let reader: AcquiredNotifyReader
        do throws(DBusError) {
            reader = try AcquiredNotifyReader(fd: try descriptor.duplicate(), mtu: mtu, clock: cache.clock)
        } catch {
            throw CentralError(error, operation: "AcquireNotify")
        }
        acquired[subscription] = reader
        // allowed: forwards the socket's notifications until its reader ends (StopNotify, shutdown or EOF)
        Task {
            for await event in reader.events { self.acquiredEvent(event, from: reader, for: subscription) }
        }
    }

    private func acquiredEvent(
        _ event: AcquiredNotifyReader.Event, from reader: AcquiredNotifyReader, for subscription: Subscription
    ) {
        switch event {
        case .value(let value, let timestamp):
            notificationCount += 1
            listeners.yield(
                .notification(
                    GATTNotification(
                        peripheral: subscription.peripheral, characteristic: subscription.characteristic, value: value,
                        receivedAt: timestamp)))
        case .closed:
            if acquired[subscription] === reader { acquired[subscription] = nil }
        }
    }

    public func stopNotifications(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID
    ) async throws(CentralError) {
        let subscription = Subscription(peripheral: peripheral, characteristic: characteristic.uuid)
        if let reader = acquired.removeValue(forKey: subscription) {
            reader.close()  // closing the socket is how an acquired notify stops
            return
        }
        subscriptions.remove(subscription)
        try await call(characteristic.handle, Self.characteristic1, "StopNotify", timeout: .seconds(10))
    }
}
