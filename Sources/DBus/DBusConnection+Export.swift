internal import CSystemd

/// Serving objects: exported objects with properties, ObjectManager and introspection, and raw handlers.
extension DBusConnection {
    /// Serves `interfaces` at `path` (adding them to an object already there, replacing same-named ones).
    ///
    /// The connection then answers, for this object: the interfaces' methods (through their handlers, after
    /// checking the call's signature), `org.freedesktop.DBus.Properties` `Get`/`GetAll`/`Set` from the stored
    /// values, `org.freedesktop.DBus.Introspectable.Introspect` (generated from the descriptions, with child
    /// nodes), and, with `objectManager`, `org.freedesktop.DBus.ObjectManager.GetManagedObjects` for everything
    /// below `path`. The nearest object manager above `path` emits `InterfacesAdded`; for a new object the list
    /// also holds `org.freedesktop.DBus.Introspectable` and `org.freedesktop.DBus.Properties` with no properties,
    /// as BlueZ's objects do. A call to a path nobody serves is answered `UnknownObject`.
    ///
    /// - Throws: ``DBusError`` of kind `invalidValue` for an invalid path, an undeclared property or a value of
    ///   the wrong type; `closed`; `system`.
    public func export(
        _ path: String, interfaces: [DBusExportedInterface], objectManager: Bool = false
    ) throws(DBusError) {
        guard DBusObjectTree.isValidPath(path) else { throw DBusError.invalidValue("export", "invalid object path") }
        for interface in interfaces {
            guard !DBusInterface.isStandard(interface.interface.name) else {
                throw DBusError.invalidValue("export", "\(interface.interface.name) is answered by the connection")
            }
            try interface.validate()
        }
        try ensureTreeRegistration()
        let isNew = objects[path] == nil
        var object = objects[path] ?? DBusObjectTree.Object(interfaces: [], isObjectManager: objectManager)
        object.isObjectManager = object.isObjectManager || objectManager
        for interface in interfaces {
            if let index = object.interfaces.firstIndex(where: { $0.interface.name == interface.interface.name }) {
                object.interfaces[index] = interface
            } else {
                object.interfaces.append(interface)
            }
        }
        objects[path] = object
        guard let manager = objects.manager(of: path), isNew || !interfaces.isEmpty else { return }
        try emitSignal(
            path: manager, interface: DBusInterface.objectManager.name, member: "InterfacesAdded",
            arguments: [.objectPath(path), DBusObjectTree.interfacesAndProperties(interfaces, standard: isNew)])
    }

    /// Stops serving `path`; its object manager emits `InterfacesRemoved` with every interface it had.
    /// Does nothing when `path` is not served.
    public func unexport(_ path: String) throws(DBusError) {
        guard let object = objects[path] else { return }
        objects[path] = nil
        try announceRemoval(
            of: object.interfaces.map(\.interface.name) + DBusObjectTree.listedStandardInterfaces, at: path)
    }

    /// Removes some interfaces from the object at `path` (`InterfacesRemoved` lists them); the object stays, and
    /// goes on answering the standard interfaces, until ``unexport(_:)``.
    public func removeInterfaces(_ names: [String], from path: String) throws(DBusError) {
        guard var object = objects[path] else { return }
        let removed = object.interfaces.map(\.interface.name).filter { names.contains($0) }
        guard !removed.isEmpty else { return }
        object.interfaces.removeAll { names.contains($0.interface.name) }
        objects[path] = object
        try announceRemoval(of: removed, at: path)
    }

    private func announceRemoval(of interfaces: [String], at path: String) throws(DBusError) {
        guard let manager = objects.manager(of: path) else { return }
        try emitSignal(
            path: manager, interface: DBusInterface.objectManager.name, member: "InterfacesRemoved",
            arguments: [.objectPath(path), .strings(interfaces)])
    }

    /// Changes properties of a served interface and emits one `PropertiesChanged` for all of them (even when a
    /// value is unchanged: a repeated GATT notification is still a notification).
    ///
    /// - Parameters:
    ///   - changes: new values by property name, emitted in name order.
    ///   - invalidated: properties to remove (``getProperty`` then fails); listed as invalidated.
    ///   - emitSignal: `false` to change the values silently.
    /// - Throws: ``DBusError`` of kind `invalidValue` when the object or interface is not served, or a property is
    ///   undeclared or of the wrong type.
    public func updateProperties(
        _ changes: [String: DBusValue], invalidated: [String] = [], interface: String, path: String,
        emitSignal: Bool = true
    ) throws(DBusError) {
        guard var object = objects[path],
            let index = object.interfaces.firstIndex(where: { $0.interface.name == interface })
        else { throw DBusError.invalidValue("updateProperties", "\(interface) is not served at this path") }
        let description = object.interfaces[index].interface
        for (name, value) in changes { try DBusExportedInterface.check(name, value, in: description) }
        for (name, value) in changes { object.interfaces[index].properties[name] = value }
        for name in invalidated { object.interfaces[index].properties[name] = nil }
        objects[path] = object
        guard emitSignal else { return }
        let changed = changes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        try emitPropertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
    }

    /// The current value of a served property, or `nil`.
    public func propertyValue(_ name: String, interface: String, path: String) -> DBusValue? {
        objects[path]?.interface(named: interface)?.properties[name]
    }

    /// The paths currently served, sorted.
    public var exportedPaths: [String] { objects.objects.keys.sorted() }

    /// Answers a call whose handler returned ``DBusReply/deferred``.
    /// - Throws: ``DBusError`` of kind `invalidValue` when the call was already answered (or `reply` is
    ///   `.deferred`), `closed`, or the error of sending.
    public func reply(to call: DBusMethodCall, with reply: DBusReply) throws(DBusError) {
        guard reply != .deferred else { throw DBusError.invalidValue("reply", "a reply cannot be .deferred") }
        guard let pointer = thread.loop.deferred.removeValue(forKey: call.token) else {
            throw DBusError.invalidValue("reply", "no deferred call \(call.member) is waiting (already answered?)")
        }
        try send(reply, to: BusMessage(adopting: pointer))
    }

    // MARK: Raw handlers

    /// Registers `handler` for method calls to `path` (`sd_bus_add_object`), or to `path` and everything below it
    /// (`sd_bus_add_fallback`). The handler sees every call, standard interfaces included; returning `nil` lets
    /// sd-bus go on (its own introspection, then `UnknownMethod`).
    public func addRawHandler(
        at path: String, includingChildren: Bool = false, _ handler: @escaping DBusRawMethodHandler
    ) throws(DBusError) -> DBusHandlerRegistration {
        guard DBusObjectTree.isValidPath(path) else { throw DBusError.invalidValue("addRawHandler", "invalid path") }
        let token = try register(path: path, fallback: includingChildren)
        rawHandlers[token] = RawHandler(path: path, includesChildren: includingChildren, handler: handler)
        return DBusHandlerRegistration(id: token, path: path, includesChildren: includingChildren)
    }

    /// Removes a raw handler (also from inside a handler).
    public func removeHandler(_ registration: DBusHandlerRegistration) {
        rawHandlers[registration.id] = nil
        // The slot may be the one whose callback is running: release it once `sd_bus_process` has returned.
        thread.loop.retireSlot(registration.id)
    }

    private func ensureTreeRegistration() throws(DBusError) {
        guard treeRegistration == nil else { return }
        treeRegistration = try register(path: "/", fallback: true)
    }

    private func register(path: String, fallback: Bool) throws(DBusError) -> UInt64 {
        let bus = try requireBus("sd_bus_add_object")
        let token = makeToken()
        let box = ObjectBox(id: token, connection: self)
        let userdata = box.retainedPointer()
        var slot: OpaquePointer?
        let result =
            fallback
            ? sd_bus_add_fallback(bus, &slot, path, { call, userdata, _ in ObjectBox.called(call, userdata) }, userdata)
            : sd_bus_add_object(bus, &slot, path, { call, userdata, _ in ObjectBox.called(call, userdata) }, userdata)
        guard result >= 0, let slot else {
            SlotBox.releaseUnregistered(userdata)
            throw DBusError.system(fallback ? "sd_bus_add_fallback" : "sd_bus_add_object", errno: max(-result, 0))
        }
        do {
            try SlotBox.attach(to: slot)
        } catch {
            sd_bus_slot_unref(slot)
            SlotBox.releaseUnregistered(userdata)
            throw error
        }
        thread.loop.slots[token] = slot
        return token
    }
}
