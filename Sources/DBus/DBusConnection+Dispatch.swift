internal import CSystemd

/// Answering incoming method calls: raw handlers first, then the exported objects and the standard interfaces.
extension DBusConnection {
    /// Routes one incoming message from the object registration `registration`. Runs inside `sd_bus_process`
    /// on the bus thread. Returns 1 when answered (or deferred), 0 to let sd-bus continue.
    func dispatch(_ message: BusMessage, registration: UInt64) -> Int32 {
        guard message.isMethodCall, let member = message.member else { return 0 }
        let arguments: [DBusValue]
        do {
            // Another registration may have read this message before declining it.
            try message.rewind()
            arguments = try message.readAll()
            try message.rewind()
        } catch {
            return answer(message, .error(name: DBusError.Name.invalidArgs, message: error.message), token: 0)
        }
        let call = DBusMethodCall(
            path: message.path ?? "/", interface: message.interface, member: member, sender: message.sender,
            destination: message.destination, signature: message.signature, arguments: arguments, token: makeToken())
        if let raw = rawHandlers[registration] {
            guard let reply = raw.handler(self, call) else { return 0 }
            return answer(message, reply, token: call.token)
        }
        guard registration == treeRegistration else { return 0 }
        return dispatchToObjects(message, call)
    }

    private func dispatchToObjects(_ message: BusMessage, _ call: DBusMethodCall) -> Int32 {
        let rawPaths = rawHandlers.values.map(\.path)
        let coveredByRaw = rawHandlers.values.contains { $0.covers(call.path) }
        if call.interface == DBusInterface.peer.name { return 0 }  // sd-bus answers Ping and GetMachineId
        if call.member == "Introspect", call.interface == nil || call.interface == DBusInterface.introspectable.name {
            guard let xml = objects.introspectionXML(at: call.path, extraPaths: rawPaths) else {
                return coveredByRaw ? 0 : answer(message, unknownObject(call), token: call.token)
            }
            return answer(message, .values([.string(xml)]), token: call.token)
        }
        guard let object = objects[call.path] else {
            if coveredByRaw || objects.hasDescendants(of: call.path, extraPaths: rawPaths) { return 0 }
            return answer(message, unknownObject(call), token: call.token)
        }
        switch call.interface {
        case DBusInterface.properties.name?:
            return answer(message, properties(call, object: object), token: call.token)
        case DBusInterface.objectManager.name? where object.isObjectManager && call.member == "GetManagedObjects":
            return answer(message, .values([objects.managedObjects(under: call.path)]), token: call.token)
        default:
            break
        }
        let candidates = object.interfaces.filter { call.interface == nil || $0.interface.name == call.interface }
        for exported in candidates {
            guard let method = exported.interface.method(named: call.member) else { continue }
            guard method.inputSignature == call.signature, let handler = exported.methodHandler else { break }
            var reply = handler(self, call)
            if case .values(let values) = reply, DBusValue.signature(of: values) != method.outputSignature {
                reply = .error(
                    name: DBusError.Name.failed,
                    message: "reply '\(DBusValue.signature(of: values))' does not match '\(method.outputSignature)'")
            }
            return answer(message, reply, token: call.token)
        }
        return answer(message, unknownMethod(call), token: call.token)
    }

    /// `org.freedesktop.DBus.Properties` for a served object.
    private func properties(_ call: DBusMethodCall, object: DBusObjectTree.Object) -> DBusReply {
        let arguments = call.arguments
        guard let interfaceName = arguments.first?.stringValue else { return unknownMethod(call) }
        let interface = object.interface(named: interfaceName)
        switch (call.member, call.signature) {
        case ("GetAll", "s"):
            if let interface { return .values([interface.readableProperties]) }
            if DBusInterface.isStandard(interfaceName) { return .values([.vardict(ordered: [])]) }
            return .error(name: DBusError.Name.invalidArgs, message: "No such interface '\(interfaceName)'")
        case ("Get", "ss"):
            guard let name = arguments[1].stringValue, let interface,
                let property = interface.interface.property(named: name), property.access.isReadable,
                let value = interface.properties[name]
            else { return .error(name: DBusError.Name.invalidArgs, message: "No such property") }
            return .values([.variant(value)])
        case ("Set", "ssv"):
            guard let name = arguments[1].stringValue, let interface,
                let property = interface.interface.property(named: name)
            else { return .error(name: DBusError.Name.invalidArgs, message: "No such property") }
            guard property.access.isWritable else {
                return .error(name: DBusError.Name.propertyReadOnly, message: "Property '\(name)' is read-only")
            }
            let value = arguments[2].unwrappedOnce
            guard value.type == property.type else {
                return .error(
                    name: DBusError.Name.invalidArgs, message: "Property '\(name)' has type '\(property.type)'")
            }
            if case .reject(let errorName, let text) = interface.propertyWriteHandler?(self, call.path, name, value) {
                return .error(name: errorName, message: text)
            }
            do {
                try updateProperties([name: value], interface: interfaceName, path: call.path)
            } catch {
                return .error(error)
            }
            return .empty
        default:
            return unknownMethod(call)
        }
    }

    private func unknownObject(_ call: DBusMethodCall) -> DBusReply {
        .error(name: DBusError.Name.unknownObject, message: "Unknown object '\(call.path)'.")
    }

    private func unknownMethod(_ call: DBusMethodCall) -> DBusReply {
        .error(
            name: DBusError.Name.unknownMethod,
            message: "Unknown method '\(call.member)' or interface '\(call.interface ?? "")' "
                + "with signature '\(call.signature)'.")
    }

    /// Sends `reply` for `message` (or keeps the message for a deferred reply); always returns 1 (handled).
    private func answer(_ message: BusMessage, _ reply: DBusReply, token: UInt64) -> Int32 {
        if reply == .deferred {
            if message.expectsReply { thread.loop.deferred[token] = sd_bus_message_ref(message.pointer) }
            return 1
        }
        do {
            try send(reply, to: message)
        } catch {
            recordUnsentReply()
        }
        return 1
    }

    /// Sends a method return or error for the call `message`; nothing when the caller expects no reply.
    func send(_ reply: DBusReply, to message: BusMessage) throws(DBusError) {
        guard message.expectsReply else { return }
        let bus = try requireBus("reply")
        switch reply {
        case .values(let values):
            let response = try message.methodReturn()
            do {
                try response.append(values)
            } catch {
                // The handler's values do not fit their types: tell the caller rather than leave it waiting.
                try message.methodError(name: DBusError.Name.failed, message: error.message).send(on: bus)
                throw error
            }
            try response.send(on: bus)
        case .error(let name, let text):
            try message.methodError(name: name, message: text).send(on: bus)
        case .deferred:
            break
        }
    }
}

extension DBusValue {
    /// The value inside one variant (the value of a `Set` call), or `self`.
    fileprivate var unwrappedOnce: DBusValue {
        if case .variant(let inner) = self { inner } else { self }
    }
}
