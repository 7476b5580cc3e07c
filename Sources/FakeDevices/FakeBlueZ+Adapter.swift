internal import DBus
internal import GATT

/// Adapter1 (discovery, RemoveDevice) and AgentManager1.
extension FakeBlueZ {
    static let adapter1 = "org.bluez.Adapter1"
    static let agentCapabilities: Set<String> = [
        "", "DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay",
    ]

    func handleAdapter(_ call: DBusMethodCall) -> DBusReply {
        let sender = call.sender ?? ""
        switch call.member {
        case "StartDiscovery":
            guard discoverySessions[sender] == nil else {
                return .error(name: BlueZErrorName.inProgress, message: "Operation already in progress")
            }
            discoverySessions[sender] = discoveryFilters[sender] ?? []
            let first = discoverySessions.count == 1
            // Discovering=true and the devices found come after the reply, as from bluetoothd 5.66 (seen in the
            // VM: Tests/BlueZClients/traffic-bluez-5.66.txt).
            // allowed: runs after the reply went out (as devices are found over the air), on the fake's executor
            Task {
                if first { self.setDiscovering(true) }
                self.lastAdvertisement = self.now
                self.reportNearbyDevices()
            }
            return .empty
        case "StopDiscovery":
            guard discoverySessions.removeValue(forKey: sender) != nil else {
                return .error(name: BlueZErrorName.failed, message: "No discovery started")
            }
            // After the reply, as in 5.66 (src/adapter.c stop_discovery_complete → discovery_cleanup).
            // allowed: runs after the StopDiscovery reply went out, on the fake's executor
            if discoverySessions.isEmpty { Task { self.endDiscovery() } }
            return .empty
        case "SetDiscoveryFilter":
            guard let filter = Self.discoveryFilter(call.arguments.first) else {
                return .error(name: BlueZErrorName.invalidArguments, message: "Invalid arguments in method call")
            }
            // An empty filter clears it.
            if filter.isSet { filteredSenders.insert(sender) } else { filteredSenders.remove(sender) }
            discoveryFilters[sender] = filter.uuids
            if discoverySessions[sender] != nil { discoverySessions[sender] = filter.uuids }
            return .empty
        case "GetDiscoveryFilters":
            return .values([
                .strings(["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])
            ])
        case "RemoveDevice":
            guard let path = call.arguments.first?.objectPathValue, devices[path]?.exported == true else {
                return .error(name: BlueZErrorName.doesNotExist, message: "Does Not Exist")
            }
            removeDevice(path)
            return .empty
        default:
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
    }

    /// Reports every nearby device some discovery session's filter accepts, as one advertisement each: a new
    /// Device1 object with `RSSI` (InterfacesAdded, a temporary device), or a `PropertiesChanged(RSSI)` for one
    /// already served (every advertisement while a filter is set, as 5.66 then reports RSSI with no threshold;
    /// without one only the first, as the simulated RSSI does not move).
    public func reportNearbyDevices() {
        guard adapterPresent, !discoverySessions.isEmpty else { return }
        let filtered = !filteredSenders.isDisjoint(with: discoverySessions.keys)
        for path in devicePaths {
            guard let device = devices[path], device.nearby, !device.connected else { continue }
            let advertised = Set(device.peripheral.identity.advertisedServices)
            let wanted = discoverySessions.values.contains { $0.isEmpty || !advertised.isDisjoint(with: $0) }
            guard wanted else { continue }
            devices[path]?.lastSeen = now
            let firstThisRun = !device.foundByDiscovery
            devices[path]?.foundByDiscovery = true
            if device.exported {
                if filtered || firstThisRun { setDeviceProperties(["RSSI": .int16(device.rssi)], at: path) }
            } else {
                do {
                    try exportDevice(at: path, rssi: device.rssi)
                    devices[path]?.temporary = true
                } catch {
                    emissionErrors.append("export \(path): \(error)")
                }
            }
        }
    }

    /// While discovering, one advertisement per ``advertisingInterval`` of the clock since the last one; the
    /// advertisements of one clock step come as one report.
    func advertise() {
        guard adapterPresent, !discoverySessions.isEmpty else { return }
        if let last = lastAdvertisement, now - last < Self.advertisingInterval { return }
        lastAdvertisement = now
        reportNearbyDevices()
    }

    /// Discovery ended (the last session stopped, or its client left): the RSSI of every device this run found is
    /// invalidated (`PropertiesChanged` with `RSSI` in the invalidated list), then `Discovering=false`. Devices
    /// stay: 5.66 removes only non-connectable temporary ones here, and every simulated peripheral is
    /// connectable; the temporary ones go ``temporaryTimeout`` after their last advertisement.
    func endDiscovery() {
        guard discoverySessions.isEmpty else { return }
        lastAdvertisement = nil
        for path in devicePaths where devices[path]?.foundByDiscovery == true {
            devices[path]?.foundByDiscovery = false
            guard devices[path]?.exported == true else { continue }
            emit("RSSI at \(path)") { bus in
                try bus.updateProperties([:], invalidated: ["RSSI"], interface: Self.device1, path: path)
            }
        }
        setDiscovering(false)
    }

    /// Removes the temporary devices (found only by discovery, never connected or paired) not seen for
    /// ``temporaryTimeout`` (src/device.c device_disappeared).
    func removeDisappearedDevices() {
        for path in devicePaths {
            guard let device = devices[path], device.exported, device.temporary, !device.connected,
                let seen = device.lastSeen, now - seen >= Self.temporaryTimeout
            else { continue }
            devices[path]?.temporary = false
            devices[path]?.lastSeen = nil
            removeDevice(path)
        }
    }

    /// A discovery filter as 5.66 parses it (src/adapter.c parse_discovery_filter_dict): `UUIDs` strings that
    /// are UUIDs, `RSSI` an `n` in -127...20, `Pathloss` a `q` up to 137 (not both), `Transport` one of `auto`,
    /// `bredr`, `le`, `DuplicateData` and `Discoverable` booleans, `Pattern` a string; any other key, type or value
    /// is `nil` (InvalidArguments). `isSet` is false for an empty dictionary, which clears the filter.
    static func discoveryFilter(_ argument: DBusValue?) -> (uuids: [BluetoothUUID], isSet: Bool)? {
        guard let entries = argument?.stringKeyedValue else { return nil }
        var uuids: [BluetoothUUID] = []
        var proximity: Set<String> = []
        for (key, value) in entries {
            switch key {
            case "UUIDs":
                guard let list = value.arrayElements, list.count <= 1024 else { return nil }
                for element in list {
                    guard case .string(let text) = element, let uuid = BluetoothUUID(text) else { return nil }
                    uuids.append(uuid)
                }
            case "RSSI":
                guard let rssi = value.int16Value, (-127...20).contains(rssi) else { return nil }
                proximity.insert(key)
            case "Pathloss":
                guard let pathloss = value.uint16Value, pathloss <= 137 else { return nil }
                proximity.insert(key)
            case "Transport":
                guard case .string(let transport) = value, ["auto", "bredr", "le"].contains(transport) else {
                    return nil
                }
            case "DuplicateData", "Discoverable":
                guard value.boolValue != nil else { return nil }
            case "Pattern":
                guard case .string = value else { return nil }
            default:
                return nil
            }
        }
        guard proximity.count < 2 else { return nil }
        return (uuids, !entries.isEmpty)
    }

    func setDiscovering(_ discovering: Bool) {
        emit("Discovering") { bus in
            try bus.updateProperties(
                ["Discovering": .boolean(discovering)], interface: Self.adapter1, path: Self.adapterPath)
        }
    }

    func handleAgentManager(_ call: DBusMethodCall) -> DBusReply {
        let sender = call.sender ?? ""
        let path = call.arguments.first?.objectPathValue ?? ""
        switch call.member {
        case "RegisterAgent":
            let capability = call.arguments.dropFirst().first?.stringValue ?? ""
            guard Self.agentCapabilities.contains(capability) else {
                return .error(name: BlueZErrorName.invalidArguments, message: "Invalid arguments in method call")
            }
            guard agents[sender] == nil else {
                return .error(name: BlueZErrorName.alreadyExists, message: "Already Exists")
            }
            agents[sender] = (path, capability.isEmpty ? "KeyboardDisplay" : capability)
            return .empty
        case "RequestDefaultAgent":
            guard agents[sender]?.path == path else {
                return .error(name: BlueZErrorName.doesNotExist, message: "Does Not Exist")
            }
            defaultAgent = sender
            return .empty
        case "UnregisterAgent":
            guard agents[sender]?.path == path else {
                return .error(name: BlueZErrorName.doesNotExist, message: "Does Not Exist")
            }
            agents[sender] = nil
            if defaultAgent == sender { defaultAgent = nil }
            return .empty
        default:
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
    }

    /// The agents registered: caller's unique name → (object path, capability).
    public var registeredAgents: [String: String] {
        agents.mapValues { "\($0.path) \($0.capability)" }
    }
}
