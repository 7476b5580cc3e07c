internal import DBus
internal import GATT

/// Applying signals to the cache, and the events they make.
extension BlueZObjectCache {
    /// Applies the signals of `subscription` until it ends or the task is cancelled.
    func consume(_ subscription: DBusSignalSubscription) async {
        for await signal in subscription {
            if Task.isCancelled { break }
            await handle(signal)
            applied += 1
            resumeDrained()
        }
        resumeDrained(ended: true)
    }

    /// Applies one signal; anything but the ObjectManager, Properties and NameOwnerChanged signals is ignored.
    func handle(_ signal: DBusSignal) async {
        let underBlueZ = { (path: String) in path == "/org/bluez" || path.hasPrefix("/org/bluez/") }
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard signal.arguments.first?.objectPathValue.map(underBlueZ) ?? true else { return }
            interfacesAdded(signal.arguments)
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard signal.arguments.first?.objectPathValue.map(underBlueZ) ?? true else { return }
            interfacesRemoved(signal.arguments)
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard underBlueZ(signal.path) else { return }
            if resolvesServices(signal) { await adoptGATTObjects(below: signal.path) }
            propertiesChanged(at: signal.path, signal.arguments)
        case ("org.freedesktop.DBus", "NameOwnerChanged"):
            await nameOwnerChanged(signal.arguments)
        default:
            break  // other bluetoothd signals (e.g. Device1.Disconnected on BlueZ >= 5.83)
        }
    }

    /// Whether `signal` turns a known device's `ServicesResolved` true.
    private func resolvesServices(_ signal: DBusSignal) -> Bool {
        guard signal.arguments.count == 3, signal.arguments[0].stringValue == Self.device1,
            objects[signal.path]?[Self.device1] != nil,
            signal.arguments[1].stringKeyedValue?["ServicesResolved"]?.looseBool == true
        else { return false }
        return true
    }

    /// bluetoothd 5.66 sends `ServicesResolved=true` before the `InterfacesAdded` of the device's GATT objects,
    /// which trickle out afterwards (seen in the BlueZ VM, docs/bluez-vm.md; its `GetManagedObjects` has them by
    /// then). They are read first, so that whoever acts on the event finds every characteristic: the objects
    /// below `device` that the cache lacks are added (those it has stay: signals still queued may be newer).
    private func adoptGATTObjects(below device: String) async {
        let all: [String: [String: [String: DBusValue]]]
        do {
            all = try await bus.managedObjects(destination: Self.serviceName)
        } catch {
            return  // bluetoothd going away: its NameOwnerChanged follows
        }
        for (path, interfaces) in all where path.hasPrefix(device + "/") {
            var object = objects[path] ?? [:]
            for (interface, properties) in interfaces where object[interface] == nil { object[interface] = properties }
            objects[path] = object
        }
        gattObjectsAdopted += 1
    }

    /// `InterfacesAdded(o, a{sa{sv}})`: merges the interfaces; a new Adapter1 or Device1 is reported.
    private func interfacesAdded(_ arguments: [DBusValue]) {
        guard arguments.count == 2, let path = arguments[0].objectPathValue,
            let interfaces = arguments[1].stringKeyedValue
        else {
            malformedSignals += 1
            return
        }
        var object = objects[path] ?? [:]
        var added: [String] = []
        for (interface, value) in interfaces {
            let properties = value.stringKeyedValue ?? [:]
            if object[interface] == nil { added.append(interface) }
            object[interface, default: [:]].merge(properties) { $1 }
        }
        objects[path] = object
        if let address = object[Self.adapter1]?["Address"]?.stringValue {
            adapterAddresses[path] = address.uppercased()
        }
        if added.contains(Self.adapter1), let info = adapterInfo(at: path) { emit(.adapterAdded(info)) }
        if added.contains(Self.device1), let info = peripheralInfo(at: path) { emit(.discovered(info)) }
    }

    /// `InterfacesRemoved(o, as)`: an adapter or device takes everything below it along (`docs/bluez.md`, R3).
    private func interfacesRemoved(_ arguments: [DBusValue]) {
        guard arguments.count == 2, let path = arguments[0].objectPathValue,
            let interfaces = arguments[1].stringArrayValue
        else {
            malformedSignals += 1
            return
        }
        if interfaces.contains(Self.adapter1) {
            // R3: the adapter's devices go with it, whether or not they were removed first.
            dropDescendants(of: path)
            if let address = adapterAddresses.removeValue(forKey: path) { emit(.adapterRemoved(address)) }
        } else if interfaces.contains(Self.device1) {
            let id = peripheralID(at: path)
            dropDescendants(of: path)
            if let id { emit(.peripheralRemoved(id)) }
        }
        guard var object = objects[path] else { return }
        for interface in interfaces { object[interface] = nil }
        objects[path] = object.isEmpty ? nil : object
    }

    /// Removes every object below `path`, reporting the devices among them.
    private func dropDescendants(of path: String) {
        for child in objects.keys.filter({ $0.hasPrefix(path + "/") }).sorted() {
            let id = peripheralID(at: child)
            objects[child] = nil
            if let id { emit(.peripheralRemoved(id)) }
        }
    }

    /// `PropertiesChanged(s, a{sv}, as)`: applies changed then invalidated properties and reports what matters.
    private func propertiesChanged(at path: String, _ arguments: [DBusValue]) {
        guard arguments.count == 3, let interface = arguments[0].stringValue,
            let changed = arguments[1].stringKeyedValue, let invalidated = arguments[2].stringArrayValue
        else {
            malformedSignals += 1
            return
        }
        // Signals for objects we do not hold (removed, or not yet added) are ignored, as BlueZ adds first.
        guard objects[path]?[interface] != nil else { return }
        objects[path]?[interface]?.merge(changed) { $1 }
        for name in invalidated { objects[path]?[interface]?[name] = nil }
        switch interface {
        case Self.adapter1:
            if let address = changed["Address"]?.stringValue { adapterAddresses[path] = address.uppercased() }
        case Self.device1:
            guard let id = peripheralID(at: path) else { return }
            if let connected = changed["Connected"]?.looseBool { emit(.connectionChanged(id, connected: connected)) }
            if let resolved = changed["ServicesResolved"]?.looseBool {
                emit(.servicesResolved(id, resolved: resolved))
            }
            let advertised = ["RSSI", "ManufacturerData", "ServiceData", "Name"]
            if advertised.contains(where: { changed[$0] != nil }), let info = peripheralInfo(at: path) {
                emit(.discovered(info))
            }
        case Self.characteristic1:
            guard let value = changed["Value"]?.looseBytes, let info = characteristicInfo(at: path),
                let device = deviceAncestor(of: path), let id = peripheralID(at: device)
            else { return }
            emit(
                .notification(
                    GATTNotification(peripheral: id, characteristic: info.uuid, value: value, receivedAt: clock())))
        default:
            break
        }
    }

    /// `NameOwnerChanged(org.bluez, old, new)`: drops everything when the owner goes, rebuilds for a new one (R2).
    private func nameOwnerChanged(_ arguments: [DBusValue]) async {
        guard arguments.count == 3, arguments[0].stringValue == Self.serviceName,
            let newOwner = arguments[2].stringValue
        else {
            malformedSignals += 1
            return
        }
        if owner != nil {
            // R2: bluetoothd went away (or was replaced); nothing it served is there any more.
            owner = nil
            objects = [:]
            adapterAddresses = [:]
            emit(.stackUnavailable)
        }
        guard !newOwner.isEmpty else { return }
        owner = newOwner
        do {
            try await load()
        } catch {
            // The new owner left again before answering; its NameOwnerChanged follows.
            objects = [:]
            adapterAddresses = [:]
            return
        }
        guard owner == newOwner else { return }
        emit(.stackAvailable)
    }

    // MARK: Typed views

    /// The adapter at `path` from its Adapter1 properties; no `Roles` (older BlueZ) counts as central-capable.
    func adapterInfo(at path: String) -> AdapterInfo? {
        guard let properties = objects[path]?[Self.adapter1],
            let address = properties["Address"]?.stringValue ?? adapterAddresses[path]
        else { return nil }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let roles = properties["Roles"]?.stringArrayValue
        return AdapterInfo(
            address: address, name: name, powered: properties["Powered"]?.looseBool ?? false,
            discovering: properties["Discovering"]?.looseBool ?? false,
            supportsCentral: roles.map { $0.contains("central") } ?? true)
    }

    /// The ID of the device at `path`: its adapter's address (by the `Adapter` property) and its `Address`.
    func peripheralID(at path: String) -> PeripheralID? {
        guard let properties = objects[path]?[Self.device1], let address = properties["Address"]?.stringValue
        else { return nil }
        let adapterPath = properties["Adapter"]?.stringValue ?? parent(of: path)
        guard let adapter = adapterAddresses[adapterPath] else { return nil }
        return PeripheralID(adapter: adapter, address: address)
    }

    /// The device at `path` from its Device1 properties.
    func peripheralInfo(at path: String) -> PeripheralInfo? {
        guard let id = peripheralID(at: path), let properties = objects[path]?[Self.device1] else { return nil }
        let name = properties["Name"]?.stringValue ?? properties["Alias"]?.stringValue
        let services = (properties["UUIDs"]?.stringArrayValue ?? []).compactMap { BluetoothUUID($0) }
        let rssi = properties["RSSI"]?.looseInteger.flatMap { Int16(exactly: $0) }
        return PeripheralInfo(
            id: id, name: name, services: services, rssi: rssi, paired: properties["Paired"]?.looseBool ?? false,
            trusted: properties["Trusted"]?.looseBool ?? false, connected: properties["Connected"]?.looseBool ?? false,
            servicesResolved: properties["ServicesResolved"]?.looseBool ?? false)
    }

    /// The characteristic at `path`, with its service's UUID and its `Flags` as properties; `handle` is the path.
    func characteristicInfo(at path: String) -> CharacteristicInfo? {
        guard let properties = objects[path]?[Self.characteristic1],
            let uuid = properties["UUID"]?.stringValue.flatMap({ BluetoothUUID($0) })
        else { return nil }
        let servicePath = properties["Service"]?.stringValue ?? parent(of: path)
        let service = objects[servicePath]?[Self.service1]?["UUID"]?.stringValue.flatMap { BluetoothUUID($0) }
        var flags: CharacteristicProperties = []
        for flag in properties["Flags"]?.stringArrayValue ?? [] {
            switch flag {
            case "read": flags.insert(.read)
            case "write-without-response": flags.insert(.writeWithoutResponse)
            case "write": flags.insert(.write)
            case "notify": flags.insert(.notify)
            case "indicate": flags.insert(.indicate)
            default: break
            }
        }
        return CharacteristicInfo(uuid: uuid, service: service ?? uuid, properties: flags, handle: path)
    }

    /// The closest ancestor of `path` holding a Device1.
    func deviceAncestor(of path: String) -> String? {
        var current = parent(of: path)
        while current.count > 1 {
            if objects[current]?[Self.device1] != nil { return current }
            current = parent(of: current)
        }
        return nil
    }

    /// `/a/b` → `/a`; `/` for top-level paths.
    func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

/// Reads that tolerate the integer widths and shapes python-dbusmock sends (`docs/bluez.md`, "python-dbusmock's
/// bluez5 template").
///
/// Its `bluez5` template also types ManufacturerData `aa{qv}`, ServiceData `aa{sv}`, AdvertisingFlags `aay` and
/// AdvertisingData `aa{yv}` (one array too many); the cache only notes that those changed and never reads their
/// contents, so they pass through as they are. A reader for them must accept both shapes
/// (`DbusmockCrossCheckTests` runs the client against that template).
extension DBusValue {
    /// Any integer type (or a byte or boolean), as an Int.
    var looseInteger: Int? {
        switch unwrapped {
        case .byte(let value): Int(value)
        case .boolean(let value): value ? 1 : 0
        case .int16(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(exactly: value)
        case .uint64(let value): Int(exactly: value)
        default: nil
        }
    }

    /// A boolean, or an integer (non-zero is true).
    var looseBool: Bool? {
        boolValue ?? looseInteger.map { $0 != 0 }
    }

    /// `ay`, or an array of any integers (or variants of them) that fit in a byte.
    var looseBytes: [UInt8]? {
        if let bytes = bytesValue { return bytes }
        guard let elements = arrayElements else { return nil }
        var bytes: [UInt8] = []
        for element in elements {
            guard let byte = element.looseInteger.flatMap({ UInt8(exactly: $0) }) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
