internal import DBus
public import GATT

/// Connecting, pairing and trust (`docs/bluez.md`, R5, R7, R8, R15).
extension BlueZCentral {
    /// R7: waits until no other Connect is in flight on `peripheral`'s adapter, pauses our discovery there, calls
    /// `Device1.Connect` with `timeout`, and on timeout cancels it with `Disconnect`. Readiness comes later as
    /// ``CentralEvent/servicesResolved(_:resolved:)``.
    public func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError) {
        let path = try await devicePath(peripheral, "Connect")
        await acquireConnectTurn(peripheral.adapter)
        defer { releaseConnectTurn(peripheral.adapter) }
        // A caller that stopped waiting for its turn (a service stopping) connects nothing.
        guard !Task.isCancelled else {
            throw CentralError(.other, operation: "Connect", detail: "cancelled before it was sent")
        }
        let paused = discovery[peripheral.adapter]
        if paused != nil { try? await endDiscovery(on: peripheral.adapter) }
        defer {
            if let paused {
                // allowed: a defer cannot await; discovery resumes after the Connect, on the central's actor
                Task { try? await self.resumeDiscovery(paused, on: peripheral.adapter) }
            }
        }
        do throws(CentralError) {
            try await call(path, Self.device1, "Connect", timeout: timeout)
        } catch  where error.kind == .timeout {
            // R7: a Connect we stop waiting for is still pending in bluetoothd; Disconnect cancels it.
            _ = try? await call(path, Self.device1, "Disconnect", timeout: .seconds(5))
            throw error
        }
    }

    private func resumeDiscovery(_ services: [BluetoothUUID], on adapter: AdapterAddress) async throws(CentralError) {
        guard discovery[adapter] != nil else { return }
        try await beginDiscovery(services: services, on: adapter)
    }

    private func acquireConnectTurn(_ adapter: AdapterAddress) async {
        guard connecting.contains(adapter) else {
            connecting.insert(adapter)
            return
        }
        await withCheckedContinuation { continuation in
            connectQueue[adapter, default: []].append(continuation)
        }
    }

    private func releaseConnectTurn(_ adapter: AdapterAddress) {
        if var waiting = connectQueue[adapter], !waiting.isEmpty {
            let next = waiting.removeFirst()
            connectQueue[adapter] = waiting
            next.resume()  // the turn passes on; `connecting` keeps the adapter
        } else {
            connecting.remove(adapter)
        }
    }

    public func disconnect(_ peripheral: PeripheralID) async throws(CentralError) {
        let path = try await devicePath(peripheral, "Disconnect")
        try await call(path, Self.device1, "Disconnect", timeout: .seconds(10))
    }

    /// Pairs through bluetoothd, telling our agent to accept this device while it runs; `AlreadyExists` (already
    /// paired) is success. On timeout the pairing is cancelled (`CancelPairing`), as BlueZ's own tools do.
    public func pair(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError) {
        let path = try await devicePath(peripheral, "Pair")
        agent?.allow(path)
        defer { agent?.disallow(path) }
        do throws(CentralError) {
            try await call(path, Self.device1, "Pair", timeout: timeout)
        } catch  where error.detail.hasPrefix("org.bluez.Error.AlreadyExists") {
            return
        } catch  where error.kind == .timeout {
            _ = try? await call(path, Self.device1, "CancelPairing", timeout: .seconds(5))
            throw error
        }
    }

    public func setTrusted(_ peripheral: PeripheralID, _ trusted: Bool) async throws(CentralError) {
        let path = try await devicePath(peripheral, "Trusted")
        do {
            try await bus.setProperty(
                "Trusted", to: .boolean(trusted), interface: Self.device1, path: path,
                destination: BlueZObjectCache.serviceName)
        } catch {
            throw CentralError(error, operation: "Set Trusted")
        }
    }

    /// `Adapter1.RemoveDevice`: forgets bond and GATT cache (R12's remedy for a stale layout).
    public func remove(_ peripheral: PeripheralID) async throws(CentralError) {
        let device = try await devicePath(peripheral, "RemoveDevice")
        let adapter = try await adapterPath(peripheral.adapter, "RemoveDevice")
        try await call(adapter, Self.adapter1, "RemoveDevice", [.objectPath(device)])
    }
}
