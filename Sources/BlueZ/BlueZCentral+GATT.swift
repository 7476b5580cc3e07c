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
        // allowed: forwards the socket's notifications until its reader ends (StopNotify, shutdown or EOF); the
        // stop awaits it
        let forwarder = Task {
            for await event in reader.events { self.acquiredEvent(event, from: reader, for: subscription) }
        }
        acquired[subscription] = AcquiredNotify(reader: reader, forwarder: forwarder)
    }

    /// An AcquireNotify socket's reader and the task that passes its values on.
    struct AcquiredNotify {
        let reader: AcquiredNotifyReader
        let forwarder: Task<Void, Never>
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
            if acquired[subscription]?.reader === reader { acquired[subscription] = nil }
        }
    }

    public func stopNotifications(
        _ characteristic: CharacteristicInfo, of peripheral: PeripheralID
    ) async throws(CentralError) {
        let subscription = Subscription(peripheral: peripheral, characteristic: characteristic.uuid)
        if let notify = acquired.removeValue(forKey: subscription) {
            notify.reader.close()  // closing the socket is how an acquired notify stops
            // What the socket still held was sent before the stop: it is passed on before the stop returns, so that
            // a caller that stops and then waits for what was forwarded loses none of it.
            await notify.forwarder.value
            return
        }
        let answer: Result<Void, CentralError>
        do throws(CentralError) {
            try await call(characteristic.handle, Self.characteristic1, "StopNotify", timeout: .seconds(10))
            answer = .success(())
        } catch {
            answer = .failure(error)
        }
        // What bluetoothd notified before it answered is on its way through the cache: it is passed on while the
        // session is still ours (a notification for a characteristic without one is not).
        await drainEvents()
        subscriptions.remove(subscription)
        try answer.get()
    }
}
