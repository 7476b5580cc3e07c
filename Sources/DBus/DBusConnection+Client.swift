/// Client helpers over ``DBusConnection/call(_:path:interface:member:arguments:timeout:)``: properties,
/// object managers and bus names.
extension DBusConnection {
    static let busDriver = "org.freedesktop.DBus"
    static let busDriverPath = "/org/freedesktop/DBus"

    /// `org.freedesktop.DBus.Properties.Get`: one property's value, unwrapped from its variant.
    /// - Throws: ``DBusError`` (kind `remote` with `org.freedesktop.DBus.Error.InvalidArgs` or `UnknownProperty`
    ///   for a missing property), or `unexpectedReply` when the reply is not one variant.
    public func getProperty(
        _ name: String, interface: String, path: String, destination: String?, timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> DBusValue {
        let reply = try await call(
            destination, path: path, interface: DBusInterface.properties.name, member: "Get",
            arguments: [.string(interface), .string(name)], timeout: timeout)
        guard reply.count == 1, case .variant(let value) = reply[0] else {
            throw unexpected("Properties.Get", expected: "v", got: reply)
        }
        return value
    }

    /// `org.freedesktop.DBus.Properties.GetAll`: every property of `interface`, unwrapped from variants.
    public func getAllProperties(
        interface: String, path: String, destination: String?, timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [String: DBusValue] {
        let reply = try await call(
            destination, path: path, interface: DBusInterface.properties.name, member: "GetAll",
            arguments: [.string(interface)], timeout: timeout)
        guard reply.count == 1, let properties = reply[0].stringKeyedValue else {
            throw unexpected("Properties.GetAll", expected: "a{sv}", got: reply)
        }
        return properties
    }

    /// `org.freedesktop.DBus.Properties.Set` (the value is wrapped in a variant).
    public func setProperty(
        _ name: String, to value: DBusValue, interface: String, path: String, destination: String?,
        timeout: Duration = .seconds(25)
    ) async throws(DBusError) {
        _ = try await call(
            destination, path: path, interface: DBusInterface.properties.name, member: "Set",
            arguments: [.string(interface), .string(name), .variant(value)], timeout: timeout)
    }

    /// `org.freedesktop.DBus.ObjectManager.GetManagedObjects` on `path`: path → interface → property → value.
    public func managedObjects(
        destination: String?, path: String = "/", timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [String: [String: [String: DBusValue]]] {
        let reply = try await call(
            destination, path: path, interface: DBusInterface.objectManager.name, member: "GetManagedObjects",
            timeout: timeout)
        guard reply.count == 1, let objects = reply[0].dictionaryEntries else {
            throw unexpected("GetManagedObjects", expected: "a{oa{sa{sv}}}", got: reply)
        }
        var result: [String: [String: [String: DBusValue]]] = [:]
        for object in objects {
            guard let path = object.key.stringValue, let interfaces = object.value.dictionaryEntries else {
                throw unexpected("GetManagedObjects", expected: "a{oa{sa{sv}}}", got: reply)
            }
            var byInterface: [String: [String: DBusValue]] = [:]
            for interface in interfaces {
                guard let name = interface.key.stringValue, let properties = interface.value.stringKeyedValue else {
                    throw unexpected("GetManagedObjects", expected: "a{oa{sa{sv}}}", got: reply)
                }
                byInterface[name] = properties
            }
            result[path] = byInterface
        }
        return result
    }

    /// Asks the bus for the well-known `name` (`org.freedesktop.DBus.RequestName`).
    /// - Returns: what the bus did; only ``DBusNameRequestResult/primaryOwner`` and
    ///   ``DBusNameRequestResult/alreadyOwner`` mean the name is ours.
    public func requestName(
        _ name: String, flags: DBusNameRequestFlags = [.doNotQueue], timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> DBusNameRequestResult {
        let reply = try await call(
            Self.busDriver, path: Self.busDriverPath, interface: Self.busDriver, member: "RequestName",
            arguments: [.string(name), .uint32(flags.rawValue)], timeout: timeout)
        guard reply.count == 1, let code = reply[0].uint32Value, let result = DBusNameRequestResult(rawValue: code)
        else {
            throw unexpected("RequestName", expected: "u", got: reply)
        }
        return result
    }

    /// Gives up the well-known `name` (`org.freedesktop.DBus.ReleaseName`); returns the bus's answer code
    /// (1 released, 2 non-existent, 3 not owner).
    @discardableResult
    public func releaseName(_ name: String, timeout: Duration = .seconds(25)) async throws(DBusError) -> UInt32 {
        let reply = try await call(
            Self.busDriver, path: Self.busDriverPath, interface: Self.busDriver, member: "ReleaseName",
            arguments: [.string(name)], timeout: timeout)
        guard reply.count == 1, let code = reply[0].uint32Value else {
            throw unexpected("ReleaseName", expected: "u", got: reply)
        }
        return code
    }

    /// The unique name owning `name` (`org.freedesktop.DBus.GetNameOwner`).
    /// - Throws: ``DBusError`` of kind `remote` with `org.freedesktop.DBus.Error.NameHasNoOwner` when nobody has it.
    public func nameOwner(_ name: String, timeout: Duration = .seconds(25)) async throws(DBusError) -> String {
        let reply = try await call(
            Self.busDriver, path: Self.busDriverPath, interface: Self.busDriver, member: "GetNameOwner",
            arguments: [.string(name)], timeout: timeout)
        guard reply.count == 1, let owner = reply[0].stringValue else {
            throw unexpected("GetNameOwner", expected: "s", got: reply)
        }
        return owner
    }

    private func unexpected(_ operation: String, expected: String, got reply: [DBusValue]) -> DBusError {
        DBusError(
            kind: .unexpectedReply, operation: operation,
            message: "expected '\(expected)', got '\(DBusValue.signature(of: reply))'")
    }
}

/// Flags of `RequestName`.
public struct DBusNameRequestFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Let another connection take the name with `replaceExisting`.
    public static let allowReplacement = DBusNameRequestFlags(rawValue: 1)
    /// Take the name from its owner if it allowed replacement.
    public static let replaceExisting = DBusNameRequestFlags(rawValue: 2)
    /// Fail instead of waiting in the queue when the name is taken.
    public static let doNotQueue = DBusNameRequestFlags(rawValue: 4)
}

/// The answer to `RequestName`.
public enum DBusNameRequestResult: UInt32, Hashable, Sendable {
    case primaryOwner = 1
    case inQueue = 2
    case exists = 3
    case alreadyOwner = 4
}
