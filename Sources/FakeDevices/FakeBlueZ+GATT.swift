internal import DBus
internal import GATT
internal import Glibc

/// GattCharacteristic1 methods and notification delivery.
extension FakeBlueZ {
    static let characteristic1 = "org.bluez.GattCharacteristic1"

    /// The device path and characteristic served at `path`.
    private func characteristic(at path: String) -> (device: String, info: FakeBlueZCharacteristic)? {
        guard let service = DBusObjectPathParent.parent(of: path),
            let device = DBusObjectPathParent.parent(of: service), let info = devices[device]?.characteristics[path]
        else { return nil }
        return (device, info)
    }

    func handleCharacteristic(_ call: DBusMethodCall) -> DBusReply {
        guard let (devicePath, info) = characteristic(at: call.path), let device = devices[devicePath] else {
            return .error(name: BlueZErrorName.unknownObject, message: "Unknown object \(call.path)")
        }
        switch call.member {
        case "ReadValue":
            guard device.connected else { return .error(name: BlueZErrorName.failed, message: "Not connected") }
            guard info.properties.contains(.read) else {
                return .error(name: BlueZErrorName.notPermitted, message: "Read not permitted")
            }
            if device.peripheral.requiresPairing && !device.paired { return Self.reply(.insufficientAuthentication) }
            do throws(ATTError) {
                guard let value = try devices[devicePath]?.peripheral.read(info.uuid) else { return .empty }
                // A read updates the cached Value too (docs/bluez.md, F5).
                setValue(value, at: call.path)
                return .values([.bytes(value)])
            } catch {
                return Self.reply(error)
            }
        case "WriteValue":
            guard device.connected else { return .error(name: BlueZErrorName.failed, message: "Not connected") }
            let value = call.arguments.first?.bytesValue ?? []
            let type = call.arguments.dropFirst().first?.stringKeyedValue?["type"]?.stringValue
            let withResponse = type.map { $0 != "command" } ?? info.properties.contains(.write)
            guard info.properties.contains(withResponse ? .write : .writeWithoutResponse) else {
                return .error(name: BlueZErrorName.notPermitted, message: "Write not permitted")
            }
            if device.peripheral.requiresPairing && !device.paired { return Self.reply(.insufficientAuthentication) }
            do throws(ATTError) {
                try devices[devicePath]?.peripheral.write(value, to: info.uuid)
            } catch {
                if withResponse { return Self.reply(error) }
            }
            // Deliver what the write made the peripheral send (a control point's indication).
            let emissions = devices[devicePath]?.peripheral.advance(to: now) ?? []
            for emission in emissions { deliver(emission, from: devicePath) }
            return .empty
        case "StartNotify":
            guard !info.properties.isDisjoint(with: [.notify, .indicate]) else {
                return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
            }
            if info.acquiredSocket != nil {
                return .error(name: BlueZErrorName.notPermitted, message: "Notify acquired")
            }
            guard let sender = call.sender else { return .error(name: BlueZErrorName.failed, message: "No sender") }
            // The CCCD is written on every link (a session that stayed is enabled again after a reconnect).
            if device.connected { devices[devicePath]?.peripheral.subscribed(to: info.uuid, at: now) }
            if info.notifySenders.contains(sender) { return .empty }
            devices[devicePath]?.characteristics[call.path]?.notifySenders.insert(sender)
            if info.notifySenders.isEmpty { setNotifying(true, at: call.path) }
            return .empty
        case "StopNotify":
            guard let sender = call.sender, info.notifySenders.contains(sender) else {
                return .error(name: BlueZErrorName.failed, message: "No notify session started")
            }
            devices[devicePath]?.characteristics[call.path]?.notifySenders.remove(sender)
            if info.notifySenders.count == 1 { setNotifying(false, at: call.path) }
            return .empty
        case "AcquireNotify":
            return acquireNotify(call, info: info, device: device, devicePath: devicePath)
        default:
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
    }

    /// AcquireNotify as BlueZ 5.66 answers it: notify characteristics only (indications came in 5.80), not while
    /// anyone has a StartNotify session (`InProgress`) or holds it already (`NotPermitted "Notify acquired"`);
    /// the client gets one end of a SEQPACKET socket pair and the MTU, and every value is one datagram.
    private func acquireNotify(
        _ call: DBusMethodCall, info: FakeBlueZCharacteristic, device: FakeBlueZDevice, devicePath: String
    ) -> DBusReply {
        guard info.properties.contains(.notify) else {
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
        guard device.connected else { return .error(name: BlueZErrorName.failed, message: "Not connected") }
        guard info.acquiredSocket == nil else {
            return .error(name: BlueZErrorName.notPermitted, message: "Notify acquired")
        }
        guard info.notifySenders.isEmpty else {
            return .error(name: BlueZErrorName.inProgress, message: "In Progress")
        }
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else {
            return .error(name: BlueZErrorName.failed, message: "socketpair failed")
        }
        let theirs: DBusFileDescriptor
        do {
            theirs = try DBusFileDescriptor(adopting: pair[1])
        } catch {
            close(pair[0])
            close(pair[1])
            return .error(name: BlueZErrorName.failed, message: "\(error)")
        }
        devices[devicePath]?.characteristics[call.path]?.acquiredSocket = pair[0]
        emit("NotifyAcquired at \(call.path)") { bus in
            try bus.updateProperties(
                ["NotifyAcquired": .boolean(true)], interface: Self.characteristic1, path: call.path)
        }
        return .values([.unixFD(theirs), .uint16(23)])
    }

    /// Closes our end of an acquired notify socket (the client sees the hang-up).
    func releaseAcquired(_ path: String, of devicePath: String) {
        guard let socket = devices[devicePath]?.characteristics[path]?.acquiredSocket else { return }
        close(socket)
        devices[devicePath]?.characteristics[path]?.acquiredSocket = nil
        emit("NotifyAcquired at \(path)") { bus in
            try bus.updateProperties(["NotifyAcquired": .boolean(false)], interface: Self.characteristic1, path: path)
        }
    }

    /// One emission: one `PropertiesChanged(Value)` on the characteristic, if someone has a notify session and
    /// the device is connected and resolved.
    func deliver(_ emission: PeripheralEmission, from devicePath: String) {
        guard let device = devices[devicePath], device.connected, device.servicesResolved else { return }
        var delivered = false
        for (path, info) in device.characteristics where info.uuid == emission.characteristic {
            if let socket = info.acquiredSocket {
                // One datagram per value; the Value property is not updated while acquired.
                let sent = emission.value.withUnsafeBytes {
                    send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                }
                if sent < 0 {
                    releaseAcquired(path, of: devicePath)  // the client closed its end
                } else {
                    delivered = true
                }
            } else if !info.notifySenders.isEmpty {
                setValue(emission.value, at: path)
                delivered = true
            }
        }
        if delivered { devices[devicePath]?.delivered.append(emission) }
    }

    func setValue(_ value: [UInt8], at path: String) {
        emit("Value at \(path)") { bus in
            try bus.updateProperties(["Value": .bytes(value)], interface: Self.characteristic1, path: path)
        }
    }

    func setNotifying(_ notifying: Bool, at path: String) {
        emit("Notifying at \(path)") { bus in
            try bus.updateProperties(["Notifying": .boolean(notifying)], interface: Self.characteristic1, path: path)
        }
    }

    /// BlueZ 5.66's answer to an ATT error (`src/gatt-client.c` create_gatt_dbus_error).
    static func reply(_ error: ATTError) -> DBusReply {
        switch error.code {
        case ATTError.readNotPermitted.code:
            .error(name: BlueZErrorName.notPermitted, message: "Read not permitted")
        case ATTError.writeNotPermitted.code:
            .error(name: BlueZErrorName.notPermitted, message: "Write not permitted")
        case ATTError.insufficientAuthentication.code, ATTError.insufficientEncryption.code, 0x0C:
            .error(name: BlueZErrorName.notPermitted, message: "Not paired")
        case 0x08:
            .error(name: BlueZErrorName.notAuthorized, message: "Operation Not Authorized")
        case 0x07:
            .error(name: "org.bluez.Error.InvalidOffset", message: "Invalid offset")
        case ATTError.requestNotSupported.code:
            .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        default:
            .error(
                name: BlueZErrorName.failed,
                message: "Operation failed with ATT error: 0x" + String(hex4(Int(error.code)).suffix(2)))
        }
    }
}

/// Object path arithmetic.
enum DBusObjectPathParent {
    /// `/a/b` → `/a`; `nil` for `/`.
    static func parent(of path: String) -> String? {
        guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
