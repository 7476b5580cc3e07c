internal import DBus
internal import GATT

/// One simulated device as FakeBlueZ keeps it.
struct FakeBlueZDevice {
    var peripheral: any SimulatedPeripheral
    let entry: FakeBlueZScenario.Peripheral
    /// Whether a Device1 object is served.
    var exported: Bool
    var paired: Bool
    var connected = false
    var servicesResolved = false
    /// The services whose GATT objects are served (the cache that survives reconnects).
    var cachedServices: [ServiceDefinition]?
    /// Served GATT objects: service paths, and characteristics by path.
    var servicePaths: [String] = []
    var characteristics: [String: FakeBlueZCharacteristic] = [:]
    /// The CCCD descriptor objects under the characteristics.
    var descriptorPaths: [String] = []
    /// How Connect calls end (``FakeBlueZ/ConnectFault``); `nil`: they succeed.
    var connectFault: FakeBlueZ.ConnectFault?
    /// A Connect left unanswered by ``FakeBlueZ/ConnectFault/noReply``.
    var pendingConnect: DBusMethodCall?
    /// Overrides the scenario's `nearby`.
    var nearbyOverride: Bool?
    /// Every value notified to a subscribed client, in order (what a client could have received).
    var delivered: [PeripheralEmission] = []
    /// A Pair waiting for the agent's answer.
    var pendingPair: DBusMethodCall?
    /// Served only because discovery found it (never connected, paired or trusted): bluetoothd removes such a
    /// device ``FakeBlueZ/temporaryTimeout`` after its last advertisement.
    var temporary = false
    /// When discovery last saw an advertisement, and whether the current discovery run reported it (its RSSI is
    /// invalidated when discovery ends).
    var lastSeen: Duration?
    var foundByDiscovery = false

    init(entry: FakeBlueZScenario.Peripheral, peripheral given: (any SimulatedPeripheral)? = nil) {
        self.entry = entry
        var peripheral = given ?? entry.script.makePeripheral()
        let paired = entry.paired ?? false
        if paired { peripheral.setPaired(true) }
        self.peripheral = peripheral
        self.paired = paired
        self.exported = paired || (entry.known ?? false)
    }

    var nearby: Bool { nearbyOverride ?? entry.nearby ?? true }
    var rssi: Int16 { entry.rssi ?? peripheral.identity.rssi }
}

/// One served characteristic.
struct FakeBlueZCharacteristic {
    let uuid: BluetoothUUID
    let properties: CharacteristicProperties
    /// Senders with a StartNotify session.
    var notifySenders: Set<String> = []
    /// Our end of the AcquireNotify socket pair, while a client holds the other.
    var acquiredSocket: Int32?
    /// Our end of the AcquireWrite socket pair, while a client holds the other.
    var writeSocket: Int32?
    /// The CCCD's object path, for characteristics that notify or indicate.
    var descriptorPath: String?
}

enum BlueZErrorName {
    static let failed = "org.bluez.Error.Failed"
    static let inProgress = "org.bluez.Error.InProgress"
    static let notConnected = "org.bluez.Error.NotConnected"
    static let notPermitted = "org.bluez.Error.NotPermitted"
    static let notAuthorized = "org.bluez.Error.NotAuthorized"
    static let notSupported = "org.bluez.Error.NotSupported"
    static let invalidArguments = "org.bluez.Error.InvalidArguments"
    static let alreadyExists = "org.bluez.Error.AlreadyExists"
    static let doesNotExist = "org.bluez.Error.DoesNotExist"
    static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
}

extension FakeBlueZ {
    static let device1 = "org.bluez.Device1"

    /// Serves the Device1 object of the device at `path` (InterfacesAdded), with `RSSI` when it was just seen.
    func exportDevice(at path: String, rssi: Int16?) throws {
        guard var device = devices[path] else { return }
        let identity = device.peripheral.identity
        var properties: [String: DBusValue] = [
            "Address": .string(identity.address), "AddressType": .string(identity.addressType),
            "Name": .string(identity.name), "Alias": .string(identity.name), "Paired": .boolean(device.paired),
            "Bonded": .boolean(device.paired), "Trusted": .boolean(false), "Blocked": .boolean(false),
            "LegacyPairing": .boolean(false), "Connected": .boolean(device.connected),
            "UUIDs": .strings(identity.advertisedServices.map(\.description)),
            "Adapter": .objectPath(Self.adapterPath), "ServicesResolved": .boolean(device.servicesResolved),
        ]
        if let rssi { properties["RSSI"] = .int16(rssi) }
        device.exported = true
        devices[path] = device
        try withBus { bus in
            try bus.export(
                path,
                interfaces: [
                    DBusExportedInterface(
                        Self.deviceInterface, properties: properties, methodHandler: handler { $0.handleDevice($1) })
                ])
        }
    }

    func setDeviceProperties(_ changes: [String: DBusValue], at path: String) {
        emit("Device1 \(changes.keys.sorted())") { bus in
            try bus.updateProperties(changes, interface: Self.device1, path: path)
        }
    }

    func handleDevice(_ call: DBusMethodCall) -> DBusReply {
        guard let device = devices[call.path], device.exported else {
            return .error(name: BlueZErrorName.unknownObject, message: "Unknown object \(call.path)")
        }
        switch call.member {
        case "Connect":
            if device.connected { return .empty }
            if device.pendingConnect != nil {
                return .error(name: BlueZErrorName.failed, message: "Operation already in progress")
            }
            if case .abortByLocalTimes(let count) = device.connectFault {
                devices[call.path]?.connectFault = count > 1 ? .abortByLocalTimes(count - 1) : nil
                if count > 0 { return .error(name: BlueZErrorName.failed, message: "le-connection-abort-by-local") }
            }
            if case .dropsBeforeResolving(let count) = device.connectFault, count > 0, device.nearby {
                devices[call.path]?.connectFault = count > 1 ? .dropsBeforeResolving(count - 1) : nil
                devices[call.path]?.connected = true
                setDeviceProperties(["Connected": .boolean(true)], at: call.path)
                afterReply { $0.disconnect(call.path) }
                return .empty
            }
            guard device.nearby, device.connectFault != .abortByLocal else {
                return .error(name: BlueZErrorName.failed, message: "le-connection-abort-by-local")
            }
            if device.connectFault == .noReply {
                devices[call.path]?.pendingConnect = call
                return .deferred
            }
            connect(call.path)
            return .empty
        case "Disconnect":
            if let pending = device.pendingConnect {
                devices[call.path]?.pendingConnect = nil
                emit("cancel Connect") { bus in
                    try bus.reply(
                        to: pending, with: .error(name: BlueZErrorName.failed, message: "br-connection-canceled"))
                }
                return .empty
            }
            // bluetoothd 5.66 answers a device that is not connected at once, successfully (seen in the BlueZ VM,
            // docs/bluez-vm.md).
            guard device.connected else { return .empty }
            // ServicesResolved=false before the reply, Connected=false after it, as 5.66 answers (seen in the
            // VM: Tests/BlueZClients/traffic-bluez-5.66.txt).
            if device.servicesResolved {
                devices[call.path]?.servicesResolved = false
                setDeviceProperties(["ServicesResolved": .boolean(false)], at: call.path)
            }
            afterReply { $0.disconnect(call.path) }
            return .empty
        case "Pair":
            if device.paired { return .error(name: BlueZErrorName.alreadyExists, message: "Already Exists") }
            guard device.nearby else {
                return .error(name: "org.bluez.Error.ConnectionAttemptFailed", message: "Page Timeout")
            }
            return pair(call)
        case "CancelPairing":
            return cancelPairing(call.path)
        default:
            return .error(name: "org.bluez.Error.NotAvailable", message: "Operation currently not available")
        }
    }

    /// Connected=true now; ServicesResolved=true and the GATT objects (first time, or when the services changed)
    /// once the Connect reply has gone out, as BlueZ does.
    func connect(_ path: String) {
        devices[path]?.connected = true
        // Connect makes a discovered device permanent (src/device.c clears its temporary flag).
        devices[path]?.temporary = false
        devices[path]?.peripheral.linkChanged(connected: true, at: now)
        setDeviceProperties(["Connected": .boolean(true)], at: path)
        // As bluetoothd resolves later.
        afterReply { $0.resolveServices(path) }
    }

    func resolveServices(_ path: String) {
        guard var device = devices[path], device.connected, !device.servicesResolved else { return }
        let services = device.peripheral.services
        // As 5.66 sends them (seen in the BlueZ VM, docs/bluez.md F3): the objects of a changed database go, then
        // ServicesResolved=true, then the new objects' InterfacesAdded; a client must not take the objects it holds
        // at ServicesResolved=true for all of them.
        let changed = device.cachedServices != services
        if changed { removeGATTObjects(of: &device, at: path) }
        device.servicesResolved = true
        devices[path] = device
        setDeviceProperties(
            ["UUIDs": .strings(services.map(\.uuid.description)), "ServicesResolved": .boolean(true)], at: path)
        if changed { exportGATTObjects(services, of: &device, at: path) }
        // While connected, BlueZ's battery plugin puts Battery1 on the device (docs/bluez.md, F6).
        if services.contains(where: { $0.uuid == .batteryService }),
            let level = try? device.peripheral.read(.batteryLevel).first
        {
            emit("Battery1 at \(path)") { bus in
                try bus.export(
                    path,
                    interfaces: [DBusExportedInterface(Self.batteryInterface, properties: ["Percentage": .byte(level)])]
                )
            }
        }
        devices[path] = device
        // Values queued while disconnected are gone, as over the air.
        _ = devices[path]?.peripheral.advance(to: now)
    }

    /// ServicesResolved=false, then Connected=false. Notify sessions stay (and come back on reconnect).
    func disconnect(_ path: String) {
        guard devices[path]?.connected == true else { return }
        if devices[path]?.servicesResolved == true {
            devices[path]?.servicesResolved = false
            setDeviceProperties(["ServicesResolved": .boolean(false)], at: path)
        }
        devices[path]?.connected = false
        devices[path]?.peripheral.linkChanged(connected: false, at: now)
        emit("Battery1 at \(path)") { bus in try bus.removeInterfaces([Self.batteryInterface.name], from: path) }
        // The acquired notify sockets hang up with the link (the client acquires again after reconnecting).
        for (charPath, info) in devices[path]?.characteristics ?? [:] where info.acquiredSocket != nil {
            releaseAcquired(charPath, of: path)
        }
        for (charPath, info) in devices[path]?.characteristics ?? [:] where info.writeSocket != nil {
            drainAcquiredWrites(charPath, of: path)
            releaseAcquiredWrite(charPath, of: path)
        }
        setDeviceProperties(["Connected": .boolean(false)], at: path)
    }

    /// Exports services and characteristics with BlueZ's paths: `%04x` of the ATT handles, laid out as a real
    /// database (service declaration, then per characteristic a declaration, a value and, when it can notify
    /// or indicate, a CCCD), the same layout as the in-process fake central's handles.
    func exportGATTObjects(_ services: [ServiceDefinition], of device: inout FakeBlueZDevice, at path: String) {
        var handle = 1
        for service in services {
            let servicePath = path + "/service" + Self.hex4(handle)
            handle += 1
            emit("export \(servicePath)") { bus in
                try bus.export(
                    servicePath,
                    interfaces: [
                        DBusExportedInterface(
                            Self.gattServiceInterface,
                            properties: [
                                "UUID": .string(service.uuid.description), "Device": .objectPath(path),
                                "Primary": .boolean(true), "Includes": .objectPaths([]),
                            ])
                    ])
            }
            device.servicePaths.append(servicePath)
            for characteristic in service.characteristics {
                let charPath = servicePath + "/char" + Self.hex4(handle)
                handle += characteristic.properties.isDisjoint(with: [.notify, .indicate]) ? 2 : 3
                device.characteristics[charPath] = FakeBlueZCharacteristic(
                    uuid: characteristic.uuid, properties: characteristic.properties)
                emit("export \(charPath)") { bus in
                    try bus.export(
                        charPath,
                        interfaces: [
                            DBusExportedInterface(
                                Self.gattCharacteristicInterface,
                                properties: [
                                    "UUID": .string(characteristic.uuid.description),
                                    "Service": .objectPath(servicePath), "Value": .bytes([]),
                                    "Notifying": .boolean(false),
                                    "Flags": .strings(Self.flags(characteristic.properties)), "MTU": .uint16(23),
                                ].merging(Self.acquiredProperties(characteristic.properties)) { $1 },
                                methodHandler: handler { $0.handleCharacteristic($1) })
                        ])
                }
                guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else { continue }
                // The Client Characteristic Configuration descriptor follows the value handle.
                let descriptorPath = charPath + "/desc" + Self.hex4(handle - 1)
                device.descriptorPaths.append(descriptorPath)
                device.characteristics[charPath]?.descriptorPath = descriptorPath
                emit("export \(descriptorPath)") { bus in
                    try bus.export(
                        descriptorPath,
                        interfaces: [
                            DBusExportedInterface(
                                Self.gattDescriptorInterface,
                                properties: [
                                    "UUID": .string(BluetoothUUID(UInt16(0x2902)).description),
                                    "Characteristic": .objectPath(charPath), "Value": .bytes([]),
                                ],
                                methodHandler: handler { $0.handleDescriptor($1) })
                        ])
                }
            }
        }
        device.cachedServices = services
    }

    func removeGATTObjects(of device: inout FakeBlueZDevice, at path: String) {
        let paths = device.descriptorPaths + device.characteristics.keys.sorted() + device.servicePaths
        for objectPath in paths {
            emit("unexport \(objectPath)") { bus in try bus.unexport(objectPath) }
        }
        device.characteristics = [:]
        device.descriptorPaths = []
        device.servicePaths = []
        device.cachedServices = nil
    }

    /// Forgets the device at `path` (RemoveDevice): disconnects, removes its GATT objects and its object.
    func removeDevice(_ path: String) {
        disconnect(path)
        guard var device = devices[path] else { return }
        removeGATTObjects(of: &device, at: path)
        device.exported = false
        device.paired = false
        device.temporary = false
        device.lastSeen = nil
        device.foundByDiscovery = false
        device.peripheral.setPaired(false)
        devices[path] = device
        emit("unexport \(path)") { bus in try bus.unexport(path) }
    }

    /// `NotifyAcquired` for characteristics that notify, `WriteAcquired` for those that take commands: 5.66
    /// lists each only where it applies.
    static func acquiredProperties(_ properties: CharacteristicProperties) -> [String: DBusValue] {
        var acquired: [String: DBusValue] = [:]
        if properties.contains(.notify) { acquired["NotifyAcquired"] = .boolean(false) }
        if properties.contains(.writeWithoutResponse) { acquired["WriteAcquired"] = .boolean(false) }
        return acquired
    }

    static func flags(_ properties: CharacteristicProperties) -> [String] {
        var flags: [String] = []
        if properties.contains(.read) { flags.append("read") }
        if properties.contains(.writeWithoutResponse) { flags.append("write-without-response") }
        if properties.contains(.write) { flags.append("write") }
        if properties.contains(.notify) { flags.append("notify") }
        if properties.contains(.indicate) { flags.append("indicate") }
        return flags
    }

    static func hex4(_ value: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
