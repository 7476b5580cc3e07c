internal import Foundation
internal import GATT
internal import Health
internal import Support

/// What the service does with the central's events and on every tick: sessions learn about the stack, their
/// peripheral's connection and resolution, and notifications become samples; discovery, registry reloads and
/// status reports run from the ticker.
extension GatewayService {
    func handle(_ event: CentralEvent) async {
        handledEvents += 1
        defer { checkSettled() }
        guard !stopped else {
            if case .notification = event { handledNotifications += 1 }
            return
        }
        lastEventAt = clock.now
        if stopping {
            guard case .notification = event else { return }
        }
        switch event {
        case .stackAvailable, .adapterAdded:
            await refreshStack()
        case .stackUnavailable:
            log.warning("bluetoothd went away; waiting for it")
            stackAvailable = false
            discovering = []
            for address in sensors.keys.sorted() { deliver(.stackUnavailable, to: address) }
        case .adapterRemoved(let adapter):
            log.warning("adapter \(address: adapter) removed", fields: [.adapter(adapter)])
            if defaultAdapter == adapter { defaultAdapter = nil }
            discovering.remove(adapter)
            for (address, runtime) in sensors where runtime.peripheral(defaultAdapter: adapter)?.adapter == adapter {
                deliver(.stackUnavailable, to: address)
            }
            await refreshStack()
        case .peripheralRemoved(let id):
            forEachSensor(matching: id) { deliver(.stackUnavailable, to: $0) }
        case .discovered(let info):
            forEachSensor(matching: info.id) { address in
                guard sensors[address]?.state.phase == .waitingForStack, stackAvailable else { return }
                sensors[address]?.adapter = info.id.adapter
                deliver(.stackAvailable, to: address)
            }
        case .connectionChanged(let id, let connected):
            forEachSensor(matching: id) { address in
                observer?.connectionChanged(address: address, connected: connected)
                deliver(.connected(connected), to: address)
            }
        case .servicesResolved(let id, let resolved):
            forEachSensor(matching: id) { deliver(.servicesResolved(resolved), to: $0) }
        case .notification(let notification):
            handledNotifications += 1
            guard let address = sensors.first(where: { $0.value.matches(notification.peripheral) })?.key,
                var runtime = sensors[address]
            else {
                checkSettled()
                return
            }
            runtime.notifications += 1
            notificationsSinceStatus += 1
            observer?.notification(notification)
            let output = runtime.builder.add(notification)
            let actions = runtime.state.handle(.notification, now: now)
            if !output.isEmpty {
                runtime.samples += Int64(output.count)
                runtime.lastSampleAt = output.latestEnd
            }
            sensors[address] = runtime
            if notification.characteristic == .recordAccessControlPoint { glucoseIndicated(address: address) }
            perform(actions, for: address)
            await writer.submit(output, receivedAt: notification.receivedAt.monotonic)
            checkSettled()
        }
    }

    func forEachSensor(matching id: PeripheralID, _ body: (String) -> Void) {
        for (address, runtime) in sensors where runtime.matches(id) { body(address) }
    }

    /// Re-reads adapters and devices after bluetoothd or an adapter came (back).
    func refreshStack() async {
        do {
            let adapters = try await central.adapters()
            let chosen =
                settings.adapter.flatMap { wanted in adapters.first { $0.address == wanted.uppercased() } }
                ?? adapters.first { $0.powered && $0.supportsCentral }
            stackAvailable = true
            defaultAdapter = chosen?.address
        } catch {
            stackAvailable = false
            defaultAdapter = nil
            return
        }
        guard let adapter = defaultAdapter else {
            log.warning("no powered adapter; waiting for one")
            return
        }
        if adapter != announcedAdapter {
            announcedAdapter = adapter
            // libudev names the hardware behind bluetoothd's adapter (when it is on this machine).
            let name = (try? await central.adapters())?.first { $0.address == adapter }?.name
            let hardware = name.flatMap(Doctor.adapterHardware) ?? "not a local controller"
            log.notice("using adapter \(name ?? "?") \(address: adapter) (\(hardware))", fields: [.adapter(adapter)])
        }
        let known = await knownPeripherals()
        for (address, runtime) in sensors where runtime.state.phase == .waitingForStack {
            guard let info = peripheral(of: runtime, among: known) else { continue }
            sensors[address]?.adapter = info.id.adapter
            deliver(.stackAvailable, to: address)
            if info.connected { deliver(.connected(true), to: address) }
            if info.servicesResolved { deliver(.servicesResolved(true), to: address) }
        }
    }

    /// bluetoothd's devices (none when it cannot say).
    func knownPeripherals() async -> [PeripheralInfo] {
        (try? await central.knownPeripherals()) ?? []
    }

    /// The device object of `runtime`'s sensor among `known`: on the adapter it was enrolled with (a device object
    /// with its address on another adapter is not the sensor's: in the BlueZ VM, with a gateway adapter per sensor,
    /// the service connected to a strap through the default adapter's object after bluetoothd restarted, and that
    /// link could not work, docs/bluez-vm.md), else on the configured adapter, preferring the default one.
    func peripheral(of runtime: SensorRuntime, among known: [PeripheralInfo]) -> PeripheralInfo? {
        let candidates = known.filter { info in
            runtime.matches(info.id) && (settings.adapter.map { $0.uppercased() == info.id.adapter } ?? true)
        }
        return candidates.first { $0.id.adapter == defaultAdapter } ?? candidates.first
    }

    // MARK: The ticker

    func tick() async {
        guard !stopping else { return }
        let now = self.now
        for address in sensors.keys.sorted() { deliver(.tick, to: address) }
        await manageDiscovery()
        if now - lastRegistryPoll >= settings.registryPollInterval {
            lastRegistryPoll = now
            if let version = try? await registry.registryVersion(), version != registryVersion {
                try? await reloadRegistry()
            }
        }
        if now - lastStatus >= settings.statusInterval {
            let elapsed = now - lastStatus
            lastStatus = now
            await reportStatus(over: elapsed)
        }
    }

    /// `docs/bluez.md`, R14: discovery runs only while a sensor's device object is missing and bluetoothd is there,
    /// on the adapter that sensor was enrolled with (else the default one): a device object found on another
    /// adapter is not the sensor's (seen in the BlueZ VM with a gateway adapter per sensor, docs/bluez-vm.md).
    func manageDiscovery() async {
        var wanted: Set<AdapterAddress> = []
        if stackAvailable {
            for runtime in sensors.values where runtime.state.phase == .waitingForStack {
                if let adapter = runtime.registered.adapter?.uppercased() ?? defaultAdapter { wanted.insert(adapter) }
            }
        }
        for adapter in wanted.subtracting(discovering).sorted() {
            do {
                try await central.startDiscovery(services: Self.discoveryServices, on: adapter)
                discovering.insert(adapter)
            } catch {
                log.debug("discovery could not start on \(address: adapter): \(error)")
            }
        }
        for adapter in discovering.subtracting(wanted).sorted() {
            discovering.remove(adapter)
            try? await central.stopDiscovery(on: adapter)
        }
    }

    func reportStatus(over elapsed: Duration) async {
        let at = Instant.now(on: clock)
        let statuses = sensors.values.map { $0.status(at: at) }
        do {
            try await registry.updateStatus(statuses)
        } catch {
            log.warning("could not write sensor statuses: \(error)")
        }
        let streaming = sensors.values.filter { $0.state.phase == .streaming }.count
        let minutes = Double(elapsed.components.seconds) / 60
        let rate = minutes > 0 ? Int((Double(notificationsSinceStatus) / minutes).rounded()) : 0
        notificationsSinceStatus = 0
        statusHook?("\(streaming)/\(sensors.count) sensors streaming, \(rate) notifications/min")
    }
}
