public import GATT
import Synchronization

/// Faults the fake stack can be told to show, mirroring what bluetoothd and controllers do.
extension FakeCentral {
    /// The next `connect` to `peripheral` answers with `fault` (several calls queue several faults).
    public func injectConnectFault(_ fault: ConnectFault, for peripheral: PeripheralID) {
        state.withLock { $0.devices[peripheral]?.connectFaults.append(fault) }
    }

    /// The next `pair` with `peripheral` fails with `org.bluez.Error.AuthenticationFailed`.
    public func injectPairingFailure(for peripheral: PeripheralID) {
        state.withLock { _ = $0.pairFaults.insert(peripheral) }
    }

    /// The peripheral drops the link (out of range, switched off): ServicesResolved false, Connected false.
    public func dropConnection(_ peripheral: PeripheralID) {
        state.withLock { $0.tearDown(peripheral) }
    }

    /// The adapter goes away (unplugged, controller reset): its connections drop, its unpaired devices are
    /// forgotten, then `adapterRemoved`.
    public func removeAdapter(_ address: AdapterAddress) {
        state.withLock { state in
            guard
                let index = state.adapters.firstIndex(where: { $0.present && $0.info.address == address.uppercased() })
            else { return }
            let missing = CentralError(
                .deviceMissing, operation: "Connect",
                detail: "org.freedesktop.DBus.Error.UnknownObject: adapter removed")
            let address = state.adapters[index].info.address
            state.failQueuedConnects(with: missing) { $0.adapter == address }
            for id in state.devices.keys.sorted() where id.adapter == address {
                state.finishPendingConnect(id, with: .failure(missing))
                state.tearDown(id)
                if state.devices[id]?.paired == false { state.devices[id]?.known = false }
            }
            state.adapters[index].present = false
            state.adapters[index].info.discovering = false
            state.emit(.adapterRemoved(state.adapters[index].info.address))
        }
    }

    /// The adapter comes back: `adapterAdded`, then `discovered` for each paired device it remembers.
    public func addAdapter(_ address: AdapterAddress) {
        state.withLock { state in
            guard
                let index = state.adapters.firstIndex(where: { !$0.present && $0.info.address == address.uppercased() })
            else { return }
            state.adapters[index].present = true
            state.emit(.adapterAdded(state.adapters[index].info))
            for id in state.devices.keys.sorted() where id.adapter == state.adapters[index].info.address {
                if state.devices[id]?.known == true, let info = state.info(id) { state.emit(.discovered(info)) }
            }
        }
    }

    /// bluetoothd stops: `stackUnavailable`, and nothing else (it sends no per-device signals when it
    /// dies). Connections, subscriptions and discovery are gone; bonds and trust stay on disk.
    public func stopStack() {
        state.withLock { state in
            guard state.stackUp else { return }
            state.stackUp = false
            let gone = CentralError(
                .unavailable, operation: "Connect", detail: "org.freedesktop.DBus.Error.NoReply: bluetoothd went away")
            state.failQueuedConnects(with: gone) { _ in true }
            for id in state.devices.keys.sorted() {
                state.finishPendingConnect(id, with: .failure(gone))
                state.devices[id]?.connected = false
                state.devices[id]?.resolved = false
                state.devices[id]?.subscriptions = []
                if state.devices[id]?.paired == false { state.devices[id]?.known = false }
            }
            for index in state.adapters.indices { state.adapters[index].info.discovering = false }
            state.emit(.stackUnavailable)
        }
    }

    /// bluetoothd is back: `stackAvailable`.
    public func startStack() {
        state.withLock { state in
            guard !state.stackUp else { return }
            state.stackUp = true
            state.emit(.stackAvailable)
        }
    }
}

extension FakeCentralState {
    /// RemoveDevice: the link drops, bond, trust, subscriptions and cache go, then `peripheralRemoved`.
    mutating func forget(_ id: PeripheralID) {
        let removed = CentralError(
            .deviceMissing, operation: "Connect", detail: "org.freedesktop.DBus.Error.UnknownObject: removed")
        failQueuedConnects(with: removed) { $0 == id }
        finishPendingConnect(id, with: .failure(removed))
        tearDown(id)
        devices[id]?.known = false
        devices[id]?.paired = false
        devices[id]?.trusted = false
        devices[id]?.subscriptions = []
        devices[id]?.table = []
        devices[id]?.resolvedServices = []
        if var simulated = devices[id]?.peripheral as? any SimulatedPeripheral {
            simulated.setPaired(false)
            devices[id]?.peripheral = simulated
        }
        emit(.peripheralRemoved(id))
    }
}
