internal import DBus
internal import GATT
internal import Glibc

/// GattCharacteristic1 methods and notification delivery.
extension FakeBlueZ {
    static let characteristic1 = "org.bluez.GattCharacteristic1"

    /// The device path and characteristic served at `path`.
    func characteristic(at path: String) -> (device: String, info: FakeBlueZCharacteristic)? {
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
            // 5.66 (src/gatt-client.c characteristic_read_value): the link first, then the options.
            guard device.connected else { return .error(name: BlueZErrorName.failed, message: "Not connected") }
            guard let options = Self.valueOptions(call.arguments.first) else { return Self.invalidArguments }
            guard info.properties.contains(.read) else {
                return .error(name: BlueZErrorName.notPermitted, message: "Read not permitted")
            }
            if device.peripheral.requiresPairing && !device.paired { return Self.reply(.insufficientAuthentication) }
            do throws(ATTError) {
                guard let value = try devices[devicePath]?.peripheral.read(info.uuid) else { return .empty }
                // A read with an offset is a Read Blob: the value from there; past its end, ATT Invalid Offset.
                let offset = Int(options.offset)
                guard offset <= value.count else { return Self.reply(ATTError(code: 0x07)) }
                // A read updates the cached Value too (docs/bluez.md, F5).
                setValue(value, at: call.path)
                return .values([.bytes(Array(value[offset...]))])
            } catch {
                return Self.reply(error)
            }
        case "WriteValue":
            return writeValue(call, info: info, device: device, devicePath: devicePath)
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
            // Enabling notifications writes the CCCD, which a peripheral that needs encryption refuses on an
            // unpaired link (docs/bluez.md, F10). While disconnected the session waits for the next connection.
            if device.connected && device.peripheral.requiresPairing && !device.paired {
                return Self.reply(.insufficientAuthentication)
            }
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
        case "AcquireWrite":
            return acquireWrite(call, info: info, device: device, devicePath: devicePath)
        default:
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
    }

    /// WriteValue as 5.66 decides it (src/gatt-client.c characteristic_write_value): `type` `request` (or
    /// `reliable`) sends a write request whatever the flags, and the peripheral's ATT error comes back;
    /// `command` sends a write command whatever the flags, answered at once, and what the peripheral refuses is
    /// lost; without `type`, a request if the flags have `write`, else a command if they have
    /// `write-without-response`, else `NotSupported`. An offset on a command, or another `type`, is `NotSupported`.
    private func writeValue(
        _ call: DBusMethodCall, info: FakeBlueZCharacteristic, device: FakeBlueZDevice, devicePath: String
    ) -> DBusReply {
        guard device.connected else { return .error(name: BlueZErrorName.failed, message: "Not connected") }
        guard let value = call.arguments.first?.bytesValue,
            let options = Self.valueOptions(call.arguments.dropFirst().first)
        else { return Self.invalidArguments }
        let request: Bool
        switch options.type?.lowercased() {
        case "request", "reliable": request = true
        case "command": request = false
        case nil where info.properties.contains(.write): request = true
        case nil where info.properties.contains(.writeWithoutResponse): request = false
        default: return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
        if !request && options.offset != 0 {
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
        if request {
            guard info.properties.contains(.write) else { return Self.reply(.writeNotPermitted) }
            if device.peripheral.requiresPairing && !device.paired { return Self.reply(.insufficientAuthentication) }
            do throws(ATTError) {
                try devices[devicePath]?.peripheral.write(value, to: info.uuid)
            } catch {
                return Self.reply(error)
            }
        } else {
            command(value, to: info, of: devicePath)
        }
        // Deliver what the write made the peripheral send (a control point's indication).
        let emissions = devices[devicePath]?.peripheral.advance(to: now) ?? []
        for emission in emissions { deliver(emission, from: devicePath) }
        return .empty
    }

    /// A write command: the peripheral takes it only where its flags allow and the link is secure enough; a
    /// refused command has no answer over the air, so it is simply lost.
    func command(_ value: [UInt8], to info: FakeBlueZCharacteristic, of devicePath: String) {
        guard let device = devices[devicePath], info.properties.contains(.writeWithoutResponse),
            !device.peripheral.requiresPairing || device.paired
        else { return }
        try? devices[devicePath]?.peripheral.write(value, to: info.uuid)
    }

    /// The options of ReadValue/WriteValue as 5.66 parses them (src/gatt-client.c parse_options): `offset` must be
    /// a `q`, `type` an `s` (keys in any case); others are ignored. `nil`: not a dictionary, or a wrong type.
    static func valueOptions(_ argument: DBusValue?) -> (offset: UInt16, type: String?)? {
        guard let entries = argument?.stringKeyedValue else { return nil }
        var offset: UInt16 = 0
        var type: String?
        for (key, value) in entries {
            switch key.lowercased() {
            case "offset":
                guard let number = value.uint16Value else { return nil }
                offset = number
            case "type":
                guard case .string(let text) = value.unwrapped else { return nil }
                type = text
            default:
                continue
            }
        }
        return (offset, type)
    }

    static let invalidArguments = DBusReply.error(
        name: BlueZErrorName.invalidArguments, message: "Invalid arguments in method call")

    /// GattDescriptor1 on a CCCD: a read answers what bluetoothd wrote to it (`01 00` while notifications are
    /// enabled, `02 00` for indications, else `00 00`) and updates `Value`; writes are refused, as 5.66 keeps the
    /// CCCD to StartNotify and StopNotify.
    func handleDescriptor(_ call: DBusMethodCall) -> DBusReply {
        guard let charPath = DBusObjectPathParent.parent(of: call.path),
            let (devicePath, info) = characteristic(at: charPath), let device = devices[devicePath]
        else { return .error(name: BlueZErrorName.unknownObject, message: "Unknown object \(call.path)") }
        guard device.connected else { return .error(name: BlueZErrorName.failed, message: "Not connected") }
        switch call.member {
        case "ReadValue":
            guard let options = Self.valueOptions(call.arguments.first) else { return Self.invalidArguments }
            let enabled = device.servicesResolved && (!info.notifySenders.isEmpty || info.acquiredSocket != nil)
            let value: [UInt8] = enabled ? (info.properties.contains(.notify) ? [1, 0] : [2, 0]) : [0, 0]
            guard Int(options.offset) <= value.count else { return Self.reply(ATTError(code: 0x07)) }
            emit("Value at \(call.path)") { bus in
                try bus.updateProperties(["Value": .bytes(value)], interface: Self.descriptor1, path: call.path)
            }
            return .values([.bytes(Array(value[Int(options.offset)...]))])
        case "WriteValue":
            return .error(name: BlueZErrorName.notPermitted, message: "Write not permitted")
        default:
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
    }

    static let descriptor1 = "org.bluez.GattDescriptor1"

    /// AcquireWrite as 5.66 answers it (src/gatt-client.c characteristic_acquire_write): `Failed "Not connected"`,
    /// `NotPermitted "Write acquired"` while held, `NotSupported` without `write-without-response`; else one end
    /// of a SEQPACKET socket pair and the MTU. Every datagram the client sends is one write command, taken on the
    /// next clock step; the socket hangs up when the link drops.
    private func acquireWrite(
        _ call: DBusMethodCall, info: FakeBlueZCharacteristic, device: FakeBlueZDevice, devicePath: String
    ) -> DBusReply {
        guard device.connected else { return .error(name: BlueZErrorName.failed, message: "Not connected") }
        guard info.writeSocket == nil else {
            return .error(name: BlueZErrorName.notPermitted, message: "Write acquired")
        }
        guard info.properties.contains(.writeWithoutResponse) else {
            return .error(name: BlueZErrorName.notSupported, message: "Operation is not supported")
        }
        guard let (ours, theirs) = Self.socketPair() else {
            return .error(name: BlueZErrorName.failed, message: "socketpair failed")
        }
        devices[devicePath]?.characteristics[call.path]?.writeSocket = ours
        emit("WriteAcquired at \(call.path)") { bus in
            try bus.updateProperties(
                ["WriteAcquired": .boolean(true)], interface: Self.characteristic1, path: call.path)
        }
        return .values([.unixFD(theirs), .uint16(23)])
    }

    /// A SEQPACKET socket pair (non-blocking, close-on-exec) as bluetoothd makes one: our end, and theirs to send.
    static func socketPair() -> (Int32, DBusFileDescriptor)? {
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else { return nil }
        do {
            return (pair[0], try DBusFileDescriptor(adopting: pair[1]))
        } catch {
            close(pair[0])  // theirs was closed by the failed adoption
            return nil
        }
    }

    /// Takes every datagram waiting on an acquired write socket as a write command; releases the socket when the
    /// client has closed its end.
    func drainAcquiredWrites(_ path: String, of devicePath: String) {
        guard let socket = devices[devicePath]?.characteristics[path]?.writeSocket else { return }
        var buffer = [UInt8](repeating: 0, count: 512)
        // At most 1,024 datagrams a step: a client that floods the socket cannot hold the fake.
        for _ in 0..<1024 {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else { return }
            if poller.revents & Int16(POLLIN) != 0 {
                let count = buffer.withUnsafeMutableBytes {
                    recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                guard count >= 0 else { return }
                if let info = devices[devicePath]?.characteristics[path] {
                    command(Array(buffer[0..<count]), to: info, of: devicePath)
                }
            } else {
                releaseAcquiredWrite(path, of: devicePath)
                return
            }
        }
    }

    /// Closes our end of an acquired write socket.
    func releaseAcquiredWrite(_ path: String, of devicePath: String) {
        guard let socket = devices[devicePath]?.characteristics[path]?.writeSocket else { return }
        close(socket)
        devices[devicePath]?.characteristics[path]?.writeSocket = nil
        emit("WriteAcquired at \(path)") { bus in
            try bus.updateProperties(["WriteAcquired": .boolean(false)], interface: Self.characteristic1, path: path)
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
        guard let (ours, theirs) = Self.socketPair() else {
            return .error(name: BlueZErrorName.failed, message: "socketpair failed")
        }
        devices[devicePath]?.characteristics[call.path]?.acquiredSocket = ours
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
        // Its CCCD could not be written on an unpaired link (StartNotify was refused, or the session waited).
        if device.peripheral.requiresPairing && !device.paired { return }
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
        case 0x07:  // InvalidArguments, not InvalidOffset: seen from 5.66 in the VM (traffic-bluez-5.66.txt)
            .error(name: BlueZErrorName.invalidArguments, message: "Invalid offset")
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
