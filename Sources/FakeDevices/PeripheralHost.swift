internal import BlueZ
public import DBus
internal import Foundation
public import GATT

/// Serves one simulated peripheral through a real bluetoothd: its services as a GATT application
/// (`GattManager1.RegisterApplication`) and its advertisement (`LEAdvertisingManager1.RegisterAdvertisement`) on
/// one adapter, so that a central on another controller reaches it over the air (the BlueZ VM rig,
/// docs/bluez-vm.md).
///
/// Objects, below ``applicationPath``: `service<N>` (GattService1) and `service<N>/char<M>`
/// (GattCharacteristic1), and `advertisement` (LEAdvertisement1). bluetoothd calls `ReadValue`, `WriteValue`,
/// `StartNotify` and `StopNotify` on them when the central does over ATT; a value the peripheral sends on a
/// characteristic bluetoothd subscribed to becomes `PropertiesChanged(Value)`, which bluetoothd notifies (or
/// indicates) to the central. Every such value is also appended to the ledger: what was sent, for the rig to
/// compare with what the gateway stored.
///
/// btvirt's emulated air delivers an advertising report only when a scanner or an advertiser is enabled, never
/// again (docs/bluez-vm.md): while no central is connected, the advertisement is registered again every
/// ``readvertiseInterval``. The host registers again with a new bluetoothd, and with its adapter when the adapter
/// comes back after it went away (its controller removed); while ``layoutFile`` exists it serves the layout of an
/// updated firmware (a service more, before the others: every handle moves).
public actor PeripheralHost {
    /// Where the application's objects live.
    public static let applicationPath = "/org/wearhouse/peripheral"
    /// The advertisement's object.
    public static let advertisementPath = applicationPath + "/advertisement"
    /// The sensor's pairing agent.
    public static let agentPath = applicationPath + "/agent"
    /// The service an updated firmware adds (``layoutFile``), and its one characteristic (read: the version).
    public static let firmwareServiceUUID = BluetoothUUID("f3c1a5e0-2b6d-4e0a-9c1e-7d2f0a6b5c01")!
    public static let firmwareVersionUUID = BluetoothUUID("f3c1a5e0-2b6d-4e0a-9c1e-7d2f0a6b5c02")!
    /// What the firmware-version characteristic reads.
    public static let updatedFirmware = Array("2.0.0".utf8)

    let bus: DBusConnection
    /// `/org/bluez/hciN`.
    public let adapterPath: String
    var peripheral: any SimulatedPeripheral
    /// Characteristic object path → its UUID, and back.
    var paths: [BluetoothUUID: String] = [:]
    var uuids: [String: BluetoothUUID] = [:]
    /// Characteristics bluetoothd subscribed to (a central enabled notifications or indications).
    var subscribed: Set<BluetoothUUID> = []
    /// What was sent to subscribed centrals, oldest first.
    public private(set) var sent: [PeripheralEmission] = []
    /// How often the advertisement was registered again.
    public private(set) var readvertisements = 0
    /// The adapter's address, as bluetoothd says (the address centrals see).
    public private(set) var adapterAddress = ""
    /// The unique name of the bluetoothd we registered with; another one means it restarted.
    var registeredWith: String?
    /// How often the application was registered (more than once: bluetoothd restarted).
    public private(set) var registrations = 0
    /// Rounds of ``keepRegistered()`` so far.
    var rounds = 0
    /// Whether a central is bonded with the sensor (then its agent no longer registers: see
    /// ``holdDefaultAgentUntilBonded()``).
    var bonded = false
    /// What the peripheral was told of its link (connected and not paused: ``advance(to:)``).
    var link = PeripheralLink()
    /// The simulation time of the last ``advance(to:)``.
    var lastAdvance: Duration = .zero
    /// Devices on our adapter that bluetoothd says are connected (its `Device1.Connected`, from signals), and when
    /// one last connected or disconnected.
    var connected: Set<String> = []
    var lastConnectionChange: ContinuousClock.Instant?
    /// How many errors scheduled work met (each one is logged).
    public private(set) var errorCount = 0
    /// The last error logged, so that one repeating every second is logged once.
    var lastError: String?
    /// Where messages go (the command prints them on standard error as they come).
    let log: @Sendable (String) -> Void
    let ledger: FileHandle?
    let start = ContinuousClock.now
    /// The capability the sensor's agent registers with: `NoInputNoOutput` (Just Works), `DisplayYesNo` (a
    /// sensor with a display and a button: numeric comparison when the central can confirm too).
    let agentCapability: String
    /// Whether bluetoothd serves our adapter (its `Adapter1` object); registration waits for it.
    var adapterPresent = true
    /// Object paths exported for the GATT application now (services and characteristics).
    var exportedPaths: [String] = []
    /// Whether the updated firmware's layout is served.
    public private(set) var servesUpdatedLayout = false

    /// While a file exists at this path, the sensor sends nothing (it lost contact, as a strap taken off): the rig
    /// stops the stream this way to compare what was sent with what was stored. bluetoothd's calls are still
    /// answered (a stopped process would leave bluetoothd's reads to time out, and 5.66 then crashed).
    public var pauseFile: String?
    public func setPauseFile(_ path: String?) { pauseFile = path }

    /// While a file exists at this path, the sensor serves the layout of an updated firmware (a service more, before
    /// the others); when it appears or goes, the application is registered again with the other layout.
    public var layoutFile: String?
    public func setLayoutFile(_ path: String?) { layoutFile = path }

    /// Between two registrations of the advertisement while nobody is connected.
    public var readvertiseInterval: Duration = .seconds(1)

    public nonisolated var unownedExecutor: UnownedSerialExecutor { bus.unownedExecutor }

    init(
        bus: DBusConnection, adapterPath: String, peripheral: any SimulatedPeripheral, ledger: FileHandle?,
        agentCapability: String, log: @escaping @Sendable (String) -> Void
    ) {
        self.bus = bus
        self.adapterPath = adapterPath
        self.peripheral = peripheral
        self.ledger = ledger
        self.agentCapability = agentCapability
        self.log = log
    }

    /// Connects to `address` (bluetoothd's bus), serves `peripheral` and registers it on `adapter` (`hci1`).
    ///
    /// - Parameters:
    ///   - ledgerPath: a file that gets one JSON line per value sent:
    ///     `{"at":1.234,"wall":1764967570.123,"characteristic":"2a37","value":"0648","indication":false}` (seconds
    ///     since start, and since 1970 on the wall clock).
    ///   - agentCapability: the sensor agent's capability (``agentCapabilities``).
    ///   - log: takes the host's messages (errors, registrations, pairing requests) as they come.
    /// - Throws: ``DBusError`` when the bus cannot be reached or bluetoothd refuses a registration (its error
    ///   name and message), ``FakeBlueZError`` for an adapter name that is not `hciN`, an unknown capability or a
    ///   ledger that cannot be opened.
    public static func start(
        on address: DBusAddress, adapter: String, peripheral: any SimulatedPeripheral, ledgerPath: String?,
        agentCapability: String = "NoInputNoOutput", log: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> PeripheralHost {
        guard adapter.hasPrefix("hci"), adapter.count <= 8,
            adapter.dropFirst(3).allSatisfy({ $0.isASCII && $0.isNumber }),
            adapter.count > 3
        else { throw FakeBlueZError(message: "the adapter must be named hciN, not '\(adapter)'") }
        guard agentCapabilities.contains(agentCapability) else {
            throw FakeBlueZError(
                message: "the agent capability must be one of \(agentCapabilities.joined(separator: ", ")), "
                    + "not '\(agentCapability)'")
        }
        var ledger: FileHandle?
        if let ledgerPath {
            guard FileManager.default.createFile(atPath: ledgerPath, contents: nil),
                let handle = FileHandle(forWritingAtPath: ledgerPath)
            else { throw FakeBlueZError(message: "cannot write the ledger \(ledgerPath)") }
            ledger = handle
        }
        let bus = try await DBusConnection.connect(to: address)
        let host = PeripheralHost(
            bus: bus, adapterPath: "/org/bluez/" + adapter, peripheral: peripheral, ledger: ledger,
            agentCapability: agentCapability, log: log)
        do {
            try await host.exportObjects()
            try await host.exportAgent()
            try await host.register()
        } catch {
            await bus.close()
            throw error
        }
        return host
    }

    /// The capabilities a sensor's agent may have (bluetoothd's `AgentManager1.RegisterAgent`).
    public static let agentCapabilities = ["NoInputNoOutput", "DisplayOnly", "DisplayYesNo", "KeyboardDisplay"]

    /// Unregisters (best effort) and closes the connection: bluetoothd drops the application with it.
    public func stop() async {
        _ = try? await bus.call(
            "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1", member: "UnregisterApplication",
            arguments: [.objectPath(Self.applicationPath)], timeout: .seconds(5))
        await bus.close()
        try? ledger?.close()
    }

    /// Runs the peripheral with the wall clock, delivering what it sends, and re-advertises while nobody is
    /// connected, until the calling task is cancelled.
    public func run(tick: Duration = .milliseconds(100)) async {
        let rule =
            "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
            + "path_namespace='\(adapterPath)'"
        // The adapter's object coming and going (its controller removed and added again); an object path
        // argument matches `arg0path`, never `arg0`.
        let adapterRule =
            "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',arg0path='\(adapterPath)'"
        // The devices of the adapter coming and going (a central's object made anew as it connects).
        let devicesRule =
            "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',arg0path='\(adapterPath)/'"
        var watches: [Task<Void, Never>] = []
        do {
            let subscription = try await bus.subscribe(toRule: rule)
            watches.append(
                Task { [weak self] in
                    for await signal in subscription { await self?.deviceChanged(signal) }
                })
            let adapters = try await bus.subscribe(toRule: adapterRule)
            watches.append(
                Task { [weak self] in
                    for await signal in adapters { await self?.adapterChanged(signal) }
                })
            let devices = try await bus.subscribe(toRule: devicesRule)
            watches.append(
                Task { [weak self] in
                    for await signal in devices { await self?.deviceChanged(signal) }
                })
        } catch {
            report("watching connections: \(error)")
        }
        defer { for watch in watches { watch.cancel() } }
        let clock = ContinuousClock()
        var lastAdvertisement = clock.now
        while !Task.isCancelled {
            do {
                try await clock.sleep(for: tick)
            } catch {
                return
            }
            advance(to: clock.now - start)
            if clock.now - lastAdvertisement >= readvertiseInterval {
                lastAdvertisement = clock.now
                await keepRegistered()
            }
        }
    }

    /// What the peripheral measured and sent, subscribed or not.
    public var groundTruth: GroundTruth { peripheral.groundTruth }

    // MARK: Serving

    /// Runs the peripheral to `time`; what it sends reaches a central only while one is connected and subscribed
    /// (bluetoothd keeps a bonded central's subscription across its disconnections, and sends nothing meanwhile).
    ///
    /// The peripheral is told of its link and of each subscription on it (``PeripheralLink``): a paused sensor is
    /// out of contact, so a scale keeps what it weighs meanwhile and sends it (and its last reading again) when the
    /// pause ends.
    func advance(to time: Duration) {
        lastAdvance = time
        let paused = pauseFile.map { FileManager.default.fileExists(atPath: $0) } ?? false
        let linked = link.update(
            &peripheral, connected: !connected.isEmpty, paused: paused, subscriptions: subscribed, at: time)
        let emissions = peripheral.advance(to: time)
        guard linked else { return }
        for emission in emissions where subscribed.contains(emission.characteristic) {
            guard let path = paths[emission.characteristic] else { continue }
            do {
                try bus.assumeIsolated { bus in
                    try bus.updateProperties(
                        ["Value": .bytes(emission.value)], interface: Self.characteristicInterface.name, path: path)
                }
            } catch {
                report("notify \(emission.characteristic): \(error)")
                continue
            }
            sent.append(emission)
            record(emission, at: time)
        }
    }

    private func record(_ emission: PeripheralEmission, at time: Duration) {
        guard let ledger else { return }
        let seconds = Double(time.components.seconds) + Double(time.components.attoseconds) / 1e18
        let wall = Date().timeIntervalSince1970
        let line =
            "{\"at\":\(String(format: "%.3f", seconds)),\"wall\":\(String(format: "%.3f", wall)),"
            + "\"characteristic\":\"\(emission.characteristic.shortDescription)\","
            + "\"value\":\"\(emission.value.map { String(format: "%02x", $0) }.joined())\","
            + "\"indication\":\(emission.isIndication)}\n"
        ledger.write(Data(line.utf8))
    }

    /// The application root (its object manager) and the advertisement: exported once.
    private func exportObjects() throws {
        let identity = peripheral.identity
        try bus.assumeIsolated { bus in
            try bus.export(Self.applicationPath, interfaces: [], objectManager: true)
        }
        try exportServices()
        try bus.assumeIsolated { bus in
            try bus.export(
                Self.advertisementPath,
                interfaces: [
                    DBusExportedInterface(
                        Self.advertisementInterface,
                        properties: [
                            "Type": .string("peripheral"),
                            "ServiceUUIDs": .strings(identity.advertisedServices.map(\.description)),
                            "LocalName": .string(identity.name), "Discoverable": .boolean(true),
                        ],
                        methodHandler: { _, _ in .empty })
                ])
        }
    }

    /// Where the first service starts in the adapter's database, and how many handles each service is given.
    /// Services ask for their handle (`Handle`), so that a host registering again (its process restarted, its
    /// adapter back, bluetoothd restarted) gets the same handles, as a rebooted sensor keeps them: with handles
    /// allocated afresh, a bonded central's cached database went stale and its StartNotify wrote a CCCD that was no
    /// longer there (ATT 0x01, seen in the BlueZ VM). The characteristics follow their service's handle in order.
    static let firstServiceHandle: UInt16 = 0x0100
    static let handlesPerService: UInt16 = 0x20

    /// The services as GattService1/GattCharacteristic1 objects: the peripheral's, after the updated firmware's
    /// service when ``servesUpdatedLayout`` (every handle then moves).
    private func exportServices() throws {
        var services = peripheral.services
        if servesUpdatedLayout {
            services.insert(
                ServiceDefinition(
                    uuid: Self.firmwareServiceUUID,
                    characteristics: [CharacteristicDefinition(uuid: Self.firmwareVersionUUID, properties: [.read])]),
                at: 0)
        }
        paths = [:]
        uuids = [:]
        for (serviceIndex, service) in services.enumerated() {
            let servicePath = "\(Self.applicationPath)/service\(serviceIndex)"
            let handle = Self.firstServiceHandle + UInt16(serviceIndex) * Self.handlesPerService
            var characteristicPaths: [String] = []
            for (index, characteristic) in service.characteristics.enumerated() {
                let path = "\(servicePath)/char\(index)"
                characteristicPaths.append(path)
                paths[characteristic.uuid] = path
                uuids[path] = characteristic.uuid
            }
            try bus.assumeIsolated { bus in
                try bus.export(
                    servicePath,
                    interfaces: [
                        DBusExportedInterface(
                            Self.serviceInterface,
                            properties: [
                                "UUID": .string(service.uuid.description), "Primary": .boolean(true),
                                "Characteristics": .objectPaths(characteristicPaths), "Handle": .uint16(handle),
                            ])
                    ])
            }
            exportedPaths.append(servicePath)
            for (index, characteristic) in service.characteristics.enumerated() {
                let path = characteristicPaths[index]
                try bus.assumeIsolated { bus in
                    try bus.export(
                        path,
                        interfaces: [
                            DBusExportedInterface(
                                Self.characteristicInterface,
                                properties: [
                                    "UUID": .string(characteristic.uuid.description),
                                    "Service": .objectPath(servicePath),
                                    "Flags": .strings(FakeBlueZ.flags(characteristic.properties)),
                                    "Notifying": .boolean(false),
                                ],
                                methodHandler: handler { $0.handleCharacteristic($1) })
                        ])
                }
                exportedPaths.append(path)
            }
        }
    }

    /// A firmware update: the application leaves bluetoothd (which tells connected centrals through Service
    /// Changed), its objects are replaced by the other layout's and it is registered again. Subscriptions went
    /// with the old objects: the central subscribes again to the new ones.
    private func changeLayout(updated: Bool) async {
        _ = try? await bus.call(
            "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1", member: "UnregisterApplication",
            arguments: [.objectPath(Self.applicationPath)], timeout: .seconds(10))
        do {
            try replaceServices(updated: updated)
            _ = try await bus.call(
                "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1", member: "RegisterApplication",
                arguments: [.objectPath(Self.applicationPath), .vardict([:])], timeout: .seconds(20))
            log("layout \(updated ? "of the updated firmware" : "of the original firmware") registered")
        } catch {
            // Registered again with the next bluetoothd or adapter (keepRegistered()).
            report("changing the layout: \(error)")
            registeredWith = nil
        }
    }

    /// Unexports the services and exports the other layout's.
    private func replaceServices(updated: Bool) throws {
        let old = exportedPaths
        try bus.assumeIsolated { bus in
            for path in old.reversed() { try bus.unexport(path) }
        }
        exportedPaths = []
        subscribed = []
        servesUpdatedLayout = updated
        try exportServices()
    }

    /// The sensor's side of a pairing. One bluetoothd serves both ends in the rig, and for the end that did not
    /// call `Pair` it asks the default agent, with `RequestAuthorization` even for Just Works (the kernel asks for
    /// confirmation of every Just Works pairing of LE Secure Connections), `RequestConfirmation` with the passkey
    /// for numeric comparison. A real sensor decides by itself; here the host's agent, kept the default one
    /// (``keepRegistered()``), accepts what a sensor without input, or with a display and a button, would. The
    /// central's end still asks the agent of whoever called `Pair` (wearhouse's).
    private func exportAgent() throws {
        let log = log
        try bus.assumeIsolated { bus in
            try bus.export(
                Self.agentPath,
                interfaces: [
                    DBusExportedInterface(
                        PairingAgent.interface,
                        methodHandler: { _, call in
                            switch call.member {
                            case "RequestPinCode", "RequestPasskey":
                                return .error(name: "org.bluez.Error.Rejected", message: "A sensor has no keypad")
                            case "RequestConfirmation":
                                let digits = call.arguments.dropFirst().first?.uint32Value.map { String($0) } ?? "?"
                                let passkey = String(repeating: "0", count: max(0, 6 - digits.count)) + digits
                                log("pairing: confirmed passkey \(passkey)")
                                return .empty
                            case "RequestAuthorization":
                                log("pairing: authorized")
                                return .empty
                            default:
                                return .empty
                            }
                        })
                ])
        }
    }

    private func register() async throws {
        let owner = try await bus.nameOwner("org.bluez", timeout: .seconds(5))
        adapterAddress =
            try await bus.getProperty(
                "Address", interface: "org.bluez.Adapter1", path: adapterPath, destination: "org.bluez"
            ).stringValue ?? ""
        try await bus.setProperty(
            "Alias", to: .string(peripheral.identity.name), interface: "org.bluez.Adapter1", path: adapterPath,
            destination: "org.bluez")
        // Each step may have been done by an earlier attempt that failed further on: AlreadyExists is done.
        try await registering {
            _ = try await bus.call(
                "org.bluez", path: adapterPath, interface: "org.bluez.GattManager1", member: "RegisterApplication",
                arguments: [.objectPath(Self.applicationPath), .vardict([:])], timeout: .seconds(20))
        }
        try await registering { try await advertise(timeout: .seconds(20)) }
        if !bonded {
            try await registering {
                _ = try await bus.call(
                    "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1", member: "RegisterAgent",
                    arguments: [.objectPath(Self.agentPath), .string(agentCapability)], timeout: .seconds(5))
            }
        }
        registeredWith = owner
        registrations += 1
        lastError = nil
        if registrations > 1 { log("registered again (\(registrations) registrations)") }
    }

    /// One bluetoothd plays every end in the rig, and its default agent does two jobs there: it answers for the
    /// end that did not call `Pair` (the sensor's), and its capability becomes the IO capability of every adapter,
    /// the gateway's included. A sensor with a display must be the default while it is paired (numeric comparison
    /// needs its `DisplayYesNo`), and must not stay it afterwards: with a `DisplayYesNo` IO capability the
    /// gateway's adapter demands an authenticated key of every strap that asks for security, and a strap bonded by
    /// Just Works was paired again at each reconnection, which failed (status 0x05 on both ends). On a real
    /// gateway the default agent is the service's (`NoInputNoOutput`), as it is here once this one steps aside.
    /// So it takes the default while no central is bonded with its adapter (bluetoothd's `Paired` on a device of
    /// the adapter, which a restarted host finds too), then unregisters its agent.
    private func holdDefaultAgentUntilBonded() async {
        let objects = try? await bus.managedObjects(destination: "org.bluez", timeout: .seconds(5))
        let paired = (objects ?? [:]).contains { path, interfaces in
            path.hasPrefix(adapterPath + "/dev_") && interfaces["org.bluez.Device1"]?["Paired"] == .boolean(true)
        }
        if paired {
            bonded = true
            _ = try? await bus.call(
                "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1", member: "UnregisterAgent",
                arguments: [.objectPath(Self.agentPath)], timeout: .seconds(5))
            log("bonded: the sensor's agent steps aside (the gateway's adapters keep the default agent's capability)")
        } else if objects != nil {
            _ = try? await bus.call(
                "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1", member: "RequestDefaultAgent",
                arguments: [.objectPath(Self.agentPath)], timeout: .seconds(5))
        }
    }

    /// Runs one registration step; bluetoothd's `AlreadyExists` means an earlier attempt did it.
    private func registering(_ step: () async throws -> Void) async throws {
        do {
            try await step()
        } catch let error as DBusError where error.name == "org.bluez.Error.AlreadyExists" {
            return
        }
    }

    /// Registers with a new bluetoothd, or again with the adapter once it is back (the old registration's
    /// subscriptions went with it); serves the layout ``layoutFile`` asks for; then re-advertises unless connected.
    private func keepRegistered() async {
        let owner = try? await bus.nameOwner("org.bluez", timeout: .seconds(5))
        if owner != registeredWith {
            forgetRegistration()
            guard owner != nil, adapterPresent else { return }
            do {
                try await register()
            } catch {
                report("registering again: \(error)")
                return
            }
        }
        let updated = layoutFile.map { FileManager.default.fileExists(atPath: $0) } ?? false
        if updated != servesUpdatedLayout { await changeLayout(updated: updated) }
        // A sensor with a display holds bluetoothd's default agent, every third round, until a central bonded with
        // it (docs/bluez-vm.md, "one bluetoothd plays both ends"); the others never take it.
        rounds += 1
        if agentCapability != "NoInputNoOutput", !bonded, rounds % 3 == 1 { await holdDefaultAgentUntilBonded() }
        await readvertiseUnlessConnected()
    }

    /// What a registration held goes with it: connections, subscriptions.
    private func forgetRegistration() {
        registeredWith = nil
        connected = []
        lastConnectionChange = nil
        for uuid in subscribed { if let path = paths[uuid] { setNotifying(false, at: path) } }
        subscribed = []
    }

    /// Our adapter's object was removed (its controller went away: bluetoothd dropped the application and the
    /// advertisement with it) or added again.
    func adapterChanged(_ signal: DBusSignal) {
        guard signal.arguments.first?.objectPathValue == adapterPath else { return }
        switch signal.member {
        case "InterfacesRemoved":
            guard signal.arguments.dropFirst().first?.stringArrayValue?.contains("org.bluez.Adapter1") == true
            else { return }
            adapterPresent = false
            forgetRegistration()
            log("adapter \(adapterPath) went away")
        case "InterfacesAdded":
            guard signal.arguments.dropFirst().first?.stringKeyedValue?["org.bluez.Adapter1"] != nil else { return }
            adapterPresent = true
            log("adapter \(adapterPath) is back")
        default:
            return
        }
    }

    /// An error of scheduled work: counted, and logged unless it repeats the last one.
    private func report(_ message: String) {
        errorCount += 1
        guard message != lastError else { return }
        lastError = message
        log("error: \(message)")
    }

    /// A device on our adapter connected or disconnected (``connectionChange(_:adapterPath:)``), or the adapter was
    /// powered on or off.
    func deviceChanged(_ signal: DBusSignal) {
        if let change = Self.connectionChange(signal, adapterPath: adapterPath) {
            if change.connected { connected.insert(change.device) } else { connected.remove(change.device) }
            lastConnectionChange = .now
            return
        }
        guard signal.member == "PropertiesChanged", signal.path == adapterPath, signal.arguments.count >= 2,
            signal.arguments[0].stringValue == "org.bluez.Adapter1",
            case .boolean(let powered)? = signal.arguments[1].stringKeyedValue?["Powered"]
        else { return }
        if !powered { connected = [] }
        log("adapter \(powered ? "powered on" : "powered off")")
        lastConnectionChange = .now
    }

    /// What a signal of bluetoothd says of the connection of a device of the adapter at `adapterPath`: the
    /// device's object and whether it is connected now; `nil` when it says nothing of one. A device's `Connected`
    /// changes in `PropertiesChanged`, except when bluetoothd makes the object anew: it drops a central it keeps
    /// nothing of (not bonded) some time after its link went, and when that central connects again the object comes
    /// back in `InterfacesAdded`, connected already, with no `PropertiesChanged` (seen in the BlueZ VM: the host then
    /// took itself for unconnected, advertised and sent nothing while a central was connected and subscribed).
    nonisolated static func connectionChange(
        _ signal: DBusSignal, adapterPath: String
    ) -> (device: String, connected: Bool)? {
        func isDevice(_ path: String) -> Bool {
            path.hasPrefix(adapterPath + "/dev_") && !path.dropFirst(adapterPath.count + 1).contains("/")
        }
        switch signal.member {
        case "PropertiesChanged":
            guard isDevice(signal.path), signal.arguments.count >= 2,
                signal.arguments[0].stringValue == "org.bluez.Device1",
                case .boolean(let connected)? = signal.arguments[1].stringKeyedValue?["Connected"]
            else { return nil }
            return (signal.path, connected)
        case "InterfacesAdded":
            guard let path = signal.arguments.first?.objectPathValue, isDevice(path),
                let device = signal.arguments.dropFirst().first?.stringKeyedValue?["org.bluez.Device1"],
                device.stringKeyedValue?["Connected"] == .boolean(true)
            else { return nil }
            return (path, true)
        case "InterfacesRemoved":
            guard let path = signal.arguments.first?.objectPathValue, isDevice(path),
                signal.arguments.dropFirst().first?.stringArrayValue?.contains("org.bluez.Device1") == true
            else { return nil }
            return (path, false)
        default:
            return nil
        }
    }

    /// Registers the advertisement again when no device on our adapter is connected, nor connected or
    /// disconnected in the last 2 s. Removing the advertisement just as a central connects made btvirt's link
    /// break a few seconds later, so the state comes from signals (a `GetManagedObjects` reply can be a second
    /// old under TCG), and the first poll only fills it in.
    private func readvertiseUnlessConnected() async {
        do {
            if lastConnectionChange == nil {
                let objects = try await bus.managedObjects(destination: "org.bluez", timeout: .seconds(5))
                for (path, interfaces) in objects
                where path.hasPrefix(adapterPath + "/")
                    && interfaces["org.bluez.Device1"]?["Connected"] == .boolean(true)
                {
                    connected.insert(path)
                }
                lastConnectionChange = .now - .seconds(60)
            }
            guard connected.isEmpty, let last = lastConnectionChange, ContinuousClock.now - last > .seconds(2)
            else { return }
            _ = try? await bus.call(
                "org.bluez", path: adapterPath, interface: "org.bluez.LEAdvertisingManager1",
                member: "UnregisterAdvertisement", arguments: [.objectPath(Self.advertisementPath)],
                timeout: .seconds(5))
            try await advertise(timeout: .seconds(5))
            readvertisements += 1
        } catch {
            // bluetoothd going away: keepRegistered() registers with the next one. The adapter's object gone (its
            // InterfacesRemoved missed): the registration went with it, and is made again once the adapter is back.
            report("re-advertising: \(error)")
            if let error = error as? DBusError,
                [DBusError.Name.unknownObject, DBusError.Name.unknownMethod].contains(error.name)
            {
                forgetRegistration()
            }
        }
    }

    /// Registers the advertisement object with the adapter's LEAdvertisingManager1.
    private func advertise(timeout: Duration) async throws {
        _ = try await bus.call(
            "org.bluez", path: adapterPath, interface: "org.bluez.LEAdvertisingManager1",
            member: "RegisterAdvertisement", arguments: [.objectPath(Self.advertisementPath), .vardict([:])],
            timeout: timeout)
    }

    // MARK: Calls from bluetoothd

    nonisolated func handler(
        _ route: @escaping @Sendable (isolated PeripheralHost, DBusMethodCall) -> DBusReply
    ) -> DBusMethodHandler {
        { [weak self] _, call in
            guard let self else { return .error(name: "org.bluez.Error.Failed", message: "Shutting down") }
            return self.assumeIsolated { route($0, call) }
        }
    }

    func handleCharacteristic(_ call: DBusMethodCall) -> DBusReply {
        guard let uuid = uuids[call.path] else {
            return .error(name: "org.bluez.Error.Failed", message: "No such characteristic")
        }
        switch call.member {
        case "ReadValue" where uuid == Self.firmwareVersionUUID:
            return .values([.bytes(Self.updatedFirmware)])
        case "ReadValue":
            do throws(ATTError) {
                // A Read Blob arrives with the offset in the options: the value from there, past its end
                // InvalidOffset (bluetoothd answers ATT 0x07).
                let value = try peripheral.read(uuid)
                let offset = Int(call.arguments.first?.stringKeyedValue?["offset"]?.uint16Value ?? 0)
                guard offset <= value.count else {
                    return .error(name: "org.bluez.Error.InvalidOffset", message: "Invalid offset")
                }
                return .values([.bytes(Array(value[offset...]))])
            } catch {
                return Self.reply(to: error)
            }
        case "WriteValue":
            guard let value = call.arguments.first?.bytesValue else {
                return .error(name: "org.bluez.Error.InvalidArguments", message: "Invalid arguments")
            }
            do throws(ATTError) {
                try peripheral.write(value, to: uuid)
                return .empty
            } catch {
                return Self.reply(to: error)
            }
        case "StartNotify":
            subscribed.insert(uuid)
            link.subscribed(&peripheral, to: uuid, at: lastAdvance)
            setNotifying(true, at: call.path)
            return .empty
        case "StopNotify":
            subscribed.remove(uuid)
            setNotifying(false, at: call.path)
            return .empty
        default:
            return .error(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "Unknown method")
        }
    }

    private func setNotifying(_ notifying: Bool, at path: String) {
        do {
            try bus.assumeIsolated { bus in
                try bus.updateProperties(
                    ["Notifying": .boolean(notifying)], interface: Self.characteristicInterface.name, path: path)
            }
        } catch {
            report("Notifying at \(path): \(error)")
        }
    }

    /// The error bluetoothd turns into the same ATT error code (its `org.bluez.Error.*` mapping for GATT
    /// applications): NotPermitted is read/write not permitted, NotAuthorized insufficient authorization,
    /// NotSupported request not supported, Failed an application error.
    static func reply(to error: ATTError) -> DBusReply {
        switch error {
        case .readNotPermitted, .writeNotPermitted:
            .error(name: "org.bluez.Error.NotPermitted", message: error.description)
        case .insufficientAuthentication, .insufficientEncryption:
            .error(name: "org.bluez.Error.NotAuthorized", message: error.description)
        case .requestNotSupported:
            .error(name: "org.bluez.Error.NotSupported", message: error.description)
        default:
            .error(name: "org.bluez.Error.Failed", message: error.description)
        }
    }

    // MARK: Interfaces of a GATT application (bluetoothd's org.bluez.GattManager1 documentation)

    static let serviceInterface = DBusInterface(
        name: "org.bluez.GattService1",
        properties: [
            .init("UUID", .string), .init("Primary", .boolean), .init("Characteristics", .array(.objectPath)),
            .init("Handle", .uint16, access: .readwrite),
        ])

    static let characteristicInterface = DBusInterface(
        name: "org.bluez.GattCharacteristic1",
        methods: FakeBlueZ.valueMethods + [.init("StartNotify"), .init("StopNotify")],
        properties: [
            .init("UUID", .string), .init("Service", .objectPath), .init("Flags", .array(.string)),
            .init("Value", .array(.byte)), .init("Notifying", .boolean),
        ])

    static let advertisementInterface = DBusInterface(
        name: "org.bluez.LEAdvertisement1",
        methods: [.init("Release")],
        properties: [
            .init("Type", .string), .init("ServiceUUIDs", .array(.string)), .init("LocalName", .string),
            .init("Discoverable", .boolean),
        ])
}
