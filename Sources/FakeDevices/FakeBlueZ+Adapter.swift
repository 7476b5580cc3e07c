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
            if discoverySessions.count == 1 { setDiscovering(true) }
            // Devices are found after the reply, as over the air.
            // allowed: runs after the reply went out (as devices are found over the air), on the fake's executor
            Task { self.reportNearbyDevices() }
            return .empty
        case "StopDiscovery":
            guard discoverySessions.removeValue(forKey: sender) != nil else {
                return .error(name: BlueZErrorName.failed, message: "No discovery started")
            }
            if discoverySessions.isEmpty { setDiscovering(false) }
            return .empty
        case "SetDiscoveryFilter":
            let filter = call.arguments.first?.stringKeyedValue ?? [:]
            let known: Set<String> = [
                "UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern",
            ]
            guard filter.keys.allSatisfy(known.contains) else {
                return .error(name: BlueZErrorName.invalidArguments, message: "Invalid arguments in method call")
            }
            let uuids = (filter["UUIDs"]?.stringArrayValue ?? []).compactMap { BluetoothUUID($0) }
            discoveryFilters[sender] = uuids
            if discoverySessions[sender] != nil { discoverySessions[sender] = uuids }
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

    /// Reports every nearby device some discovery session's filter accepts: a new Device1 object with `RSSI`
    /// (InterfacesAdded), or a `PropertiesChanged(RSSI)` for one already served.
    public func reportNearbyDevices() {
        guard adapterPresent, !discoverySessions.isEmpty else { return }
        for path in devicePaths {
            guard let device = devices[path], device.nearby, !device.connected else { continue }
            let advertised = Set(device.peripheral.identity.advertisedServices)
            let wanted = discoverySessions.values.contains { $0.isEmpty || !advertised.isDisjoint(with: $0) }
            guard wanted else { continue }
            if device.exported {
                setDeviceProperties(["RSSI": .int16(device.rssi)], at: path)
            } else {
                do {
                    try exportDevice(at: path, rssi: device.rssi)
                } catch {
                    emissionErrors.append("export \(path): \(error)")
                }
            }
        }
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
