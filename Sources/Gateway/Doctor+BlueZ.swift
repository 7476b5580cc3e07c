import BlueZ
import DBus
import GATT

extension Doctor {
    /// What the bus checks found, and whether bluetoothd answered (otherwise HCI is asked directly).
    struct BlueZCheck {
        var findings: [DoctorFinding] = []
        var answered = false
        var adapterCount = 0
        /// The devices bluetoothd knows (when it answered).
        var peripherals: [PeripheralInfo]?
    }

    /// The bus, `org.bluez` on it, and bluetoothd's adapters.
    func checkBlueZ(bus address: DBusAddress, adapter wanted: AdapterAddress?) async -> BlueZCheck {
        var check = BlueZCheck()
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: address, timeout: timeout)
        } catch {
            check.findings.append(
                .error(
                    "bus", "cannot connect to \(Self.describe(address)): \(error)",
                    fix: address == .system
                        ? "Start D-Bus (systemctl start dbus), or give the bus with --bus ADDRESS."
                        : "Check the address given with --bus or bluetooth.bus in the configuration."))
            return check
        }
        do {
            let owner = try await connection.nameOwner(BlueZObjectCache.serviceName, timeout: timeout)
            check.findings.append(.ok("bluetoothd", "org.bluez is owned by \(owner) on \(Self.describe(address))"))
        } catch {
            if error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                check.findings.append(
                    .error(
                        "bluetoothd", "bluetoothd is not running: nobody owns org.bluez on \(Self.describe(address))",
                        fix: "Install and start BlueZ: apt install bluez && systemctl enable --now bluetooth."))
            } else {
                check.findings.append(
                    .error(
                        "bluetoothd", "cannot ask \(Self.describe(address)) who owns org.bluez: \(error)",
                        fix: "Check the bus policy lets this user talk to org.bluez (group bluetooth)."))
            }
            await connection.close()
            return check
        }
        let cache = BlueZObjectCache(bus: connection)
        let adapters: [AdapterInfo]
        do {
            try await cache.start()
            adapters = await cache.adapters
            check.peripherals = await cache.peripherals
            await cache.stop()
        } catch {
            check.findings.append(
                .error(
                    "bluetoothd", "bluetoothd does not answer GetManagedObjects: \(error)",
                    fix: "Restart it (systemctl restart bluetooth) and look at journalctl -u bluetooth."))
            await connection.close()
            return check
        }
        await connection.close()
        check.answered = true
        check.adapterCount = adapters.count
        check.findings += Self.adapterFindings(adapters, wanted: wanted)
        return check
    }

    /// One finding per adapter; a missing or unusable adapter is an error only when no adapter is usable.
    static func adapterFindings(_ adapters: [AdapterInfo], wanted: AdapterAddress?) -> [DoctorFinding] {
        guard !adapters.isEmpty else {
            return [
                .error(
                    "adapter", "bluetoothd has no adapter",
                    fix: "Plug in a Bluetooth 4.0+ adapter; if one is there, see the rfkill, udev and kernel lines "
                        + "and dmesg | grep -i bluetooth.")
            ]
        }
        let candidates = wanted.map { address in adapters.filter { $0.address == address.uppercased() } } ?? adapters
        let usable = candidates.contains { $0.powered && $0.supportsCentral }
        var findings: [DoctorFinding] = []
        if let wanted, candidates.isEmpty {
            findings.append(
                .error(
                    "adapter", "the configured adapter \(wanted) is not there",
                    fix: "Plug it in, or change bluetooth.adapter (empty picks the first powered adapter)."))
        }
        for adapter in adapters {
            let name = "\(adapter.name) (\(adapter.address))"
            let severity: DoctorFinding.Severity = usable || !candidates.contains(adapter) ? .warning : .error
            if !adapter.supportsCentral {
                findings.append(
                    DoctorFinding(
                        "adapter", severity, "adapter \(name) cannot act as an LE central",
                        fix: "Use an adapter with Bluetooth 4.0 (LE) or later."))
            } else if !adapter.powered {
                findings.append(
                    DoctorFinding(
                        "adapter", severity, "adapter \(name) is off",
                        fix: "Turn it on (bluetoothctl power on), or set AutoEnable=true in /etc/bluetooth/main.conf; "
                            + "if it will not, see the rfkill line."))
            } else {
                let unused = candidates.contains(adapter) ? "" : " (unused: bluetooth.adapter names another)"
                findings.append(.ok("adapter", "adapter \(name) is powered and can act as an LE central" + unused))
            }
        }
        return findings
    }

    /// "the system bus", "the bus at unix:path=…".
    static func describe(_ address: DBusAddress) -> String {
        switch address {
        case .system: "the system bus"
        case .session: "the session bus"
        case .address(let text): "the bus at \(text)"
        }
    }
}
