internal import DBus

/// The fault API: what goes wrong between bluetoothd and a device, on demand.
extension FakeBlueZ {
    /// How Connect calls to a device end while the fault is set.
    public enum ConnectFault: Hashable, Sendable {
        /// `org.bluez.Error.Failed` "le-connection-abort-by-local" (a failed LE connect, the kernel's 20 s
        /// timeout included, in 5.66), answered at once; `Connected` stays false.
        case abortByLocal
        /// No answer. A second Connect meanwhile answers `org.bluez.Error.Failed` "Operation already in
        /// progress"; Disconnect cancels it, and it then answers `Failed` "br-connection-canceled".
        case noReply
        /// The next `count` Connects answer as ``abortByLocal``; later ones succeed (the fault then clears).
        case abortByLocalTimes(Int)
        /// The next `count` Connects are answered, `Connected` turns true, and the link drops before the
        /// services are resolved (an aborted connect that bluetoothd briefly showed as connected).
        case dropsBeforeResolving(Int)
    }

    /// Sets (or, with `nil`, clears) how Connect calls to the device at `address` end.
    public func setConnectFault(_ fault: ConnectFault?, for address: String) {
        devices[Self.devicePath(address)]?.connectFault = fault
    }

    /// Moves the device at `address` in or out of radio range: out of range, Connect fails with
    /// "le-connection-abort-by-local" and discovery does not report it. Does not drop a connection (see
    /// ``dropConnection(of:)``).
    public func setNearby(_ nearby: Bool, for address: String) {
        devices[Self.devicePath(address)]?.nearbyOverride = nearby
    }

    /// The link is lost (the peripheral went away or disconnected): `ServicesResolved=false`, then
    /// `Connected=false`. Notify sessions stay and come back on the next connection.
    public func dropConnection(of address: String) {
        disconnect(Self.devicePath(address))
    }

    /// The adapter goes away (unplugged, `hciconfig hci0 down`-like removal): every device disconnects and its
    /// objects are removed (`InterfacesRemoved`, GATT objects first), then the adapter's. Discovery sessions end.
    /// Calls to the old paths then answer `UnknownObject`.
    public func removeAdapter() {
        guard adapterPresent else { return }
        for path in devicePaths where devices[path]?.exported == true {
            disconnect(path)
            guard var device = devices[path] else { continue }
            removeGATTObjects(of: &device, at: path)
            device.exported = false
            devices[path] = device
            emit("unexport \(path)") { bus in try bus.unexport(path) }
        }
        discoverySessions = [:]
        lastAdvertisement = nil
        adapterPresent = false
        emit("unexport adapter") { bus in try bus.unexport(Self.adapterPath) }
    }

    /// The adapter comes back: Adapter1 (InterfacesAdded), then the paired and known devices, disconnected.
    public func addAdapter() {
        guard !adapterPresent else { return }
        adapterPresent = true
        do {
            try exportAdapter()
            for path in devicePaths {
                guard let device = devices[path], device.paired || device.entry.known == true else { continue }
                try exportDevice(at: path, rssi: nil)
            }
        } catch {
            emissionErrors.append("addAdapter: \(error)")
        }
    }

    /// bluetoothd restarts: every connection drops, notify and discovery sessions and agents are forgotten, the
    /// name `org.bluez` is released (clients see `NameOwnerChanged` to nobody) and, after `downtime`, taken again
    /// (a new owner, as a restarted bluetoothd is). Pending Connect and Pair calls are answered with errors.
    public func restart(downtime: Duration = .milliseconds(200)) async throws {
        for path in devicePaths where devices[path]?.exported == true {
            disconnect(path)
            if let pending = devices[path]?.pendingConnect {
                devices[path]?.pendingConnect = nil
                emit("reply to Connect") { bus in
                    try bus.reply(to: pending, with: .error(name: BlueZErrorName.failed, message: "Terminated"))
                }
            }
            for key in devices[path]?.characteristics.keys.sorted() ?? [] {
                devices[path]?.characteristics[key]?.notifySenders = []
            }
        }
        discoverySessions = [:]
        discoveryFilters = [:]
        filteredSenders = []
        lastAdvertisement = nil
        agents = [:]
        defaultAgent = nil
        _ = try await bus.releaseName(Self.busName)
        try await Task.sleep(for: downtime)
        let result = try await bus.requestName(Self.busName, flags: [.doNotQueue])
        guard result == .primaryOwner || result == .alreadyOwner else {
            throw FakeBlueZError(message: "org.bluez was taken while bluetoothd restarted (\(result))")
        }
    }

    /// Whether a Connect to the device at `address` is waiting for its answer (``ConnectFault/noReply``).
    public func isConnecting(_ address: String) -> Bool {
        devices[Self.devicePath(address)]?.pendingConnect != nil
    }

    /// Whether the device at `address` is connected.
    public func isConnected(_ address: String) -> Bool {
        devices[Self.devicePath(address)]?.connected ?? false
    }

    /// Whether the device at `address` is paired (bonded).
    public func isPaired(_ address: String) -> Bool {
        devices[Self.devicePath(address)]?.paired ?? false
    }

    /// Whether bluetoothd has an object for the device at `address` (not removed with RemoveDevice).
    public func isKnown(_ address: String) -> Bool {
        devices[Self.devicePath(address)]?.exported ?? false
    }
}
