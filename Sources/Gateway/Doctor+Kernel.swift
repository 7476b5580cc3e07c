internal import CBluetooth
internal import CUdev
import Foundation
internal import Glibc

/// An rfkill switch from `/sys/class/rfkill/rfkillN`.
struct RfkillSwitch: Equatable, Sendable {
    var name: String
    var type: String
    var softBlocked: Bool
    var hardBlocked: Bool
}

/// A device udev knows, with what its parents say about it.
struct UdevDevice: Equatable, Sendable {
    var name: String
    /// The subsystem of the device it hangs off (`usb`, `pci`, `serial`, `sdio`), if any.
    var bus: String?
    var vendorID: String?
    var productID: String?
    var vendor: String?
    var product: String?
    /// The first driver bound on the way up (`btusb`, `hci_uart`).
    var driver: String?

    /// Bus, USB ids, names and driver, for people.
    var hardware: String {
        var parts: [String] = []
        if let bus { parts.append(bus.uppercased()) }
        if let vendorID, let productID { parts.append("\(vendorID):\(productID)") }
        let names = [vendor, product].compactMap { $0 }
        if !names.isEmpty { parts.append(names.joined(separator: " ")) }
        parts.append("driver " + (driver ?? "none"))
        return parts.joined(separator: ", ")
    }
}

/// A controller as the kernel reports it over HCI.
struct HCIController: Equatable, Sendable {
    var name: String
    var address: String
    var bus: String
    var up: Bool
    var lowEnergy: Bool
}

/// What asking the kernel over HCI gave.
enum HCIProbe: Equatable, Sendable {
    /// `socket(AF_BLUETOOTH, …)` failed with EAFNOSUPPORT: the kernel has no Bluetooth.
    case noBluetoothInKernel
    /// The socket could not be opened for another reason (errno).
    case socketFailed(Int32)
    case controllers([HCIController])
}

extension Doctor {
    // MARK: rfkill

    /// The Bluetooth rfkill switches: blocked ones are errors.
    static func checkRfkill(sysfs: String) -> [DoctorFinding] {
        let switches = rfkillSwitches(directory: sysfs + "/class/rfkill").filter { $0.type == "bluetooth" }
        guard !switches.isEmpty else { return [.ok("rfkill", "no Bluetooth rfkill switch")] }
        return switches.map { device in
            if device.hardBlocked {
                return .error(
                    "rfkill", "\(device.name) is blocked by a hardware switch",
                    fix: "Flip the wireless switch or key (or the BIOS setting) that turns Bluetooth on.")
            }
            if device.softBlocked {
                return .error(
                    "rfkill", "\(device.name) is blocked in software", fix: "Unblock it: rfkill unblock bluetooth.")
            }
            return .ok("rfkill", "\(device.name) is not blocked")
        }
    }

    /// Every switch under `directory` (`rfkillN/{name,type,soft,hard}`), in name order.
    static func rfkillSwitches(directory: String) -> [RfkillSwitch] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return entries.sorted().compactMap { entry in
            let base = directory + "/" + entry + "/"
            func read(_ name: String) -> String? {
                (try? String(contentsOfFile: base + name, encoding: .utf8))?.trimmingCharacters(
                    in: .whitespacesAndNewlines)
            }
            guard let type = read("type") else { return nil }
            return RfkillSwitch(
                name: read("name").map { "\(entry) (\($0))" } ?? entry, type: type, softBlocked: read("soft") == "1",
                hardBlocked: read("hard") == "1")
        }
    }

    // MARK: udev

    /// The controllers udev lists. None is a warning only when bluetoothd has no adapter either (BlueZ's
    /// adapters may be simulated, or the host's seen from a container).
    static func checkUdev(bluezHasAdapters: Bool) -> [DoctorFinding] {
        guard let devices = udevDevices(subsystem: "bluetooth", devtype: "host") else {
            return [.warning("udev", "cannot read the udev device list", fix: "Check that /sys is mounted.")]
        }
        guard !devices.isEmpty else {
            if bluezHasAdapters {
                return [.ok("udev", "udev lists no Bluetooth controller here; bluetoothd's adapters are not local")]
            }
            return [
                .warning(
                    "udev", "udev lists no Bluetooth controller",
                    fix: "Plug in an adapter; for a USB dongle, lsusb should show it and the btusb module be loaded.")
            ]
        }
        return devices.map { device in
            guard device.driver != nil else {
                return .warning(
                    "udev", "\(device.name): \(device.hardware)",
                    fix: "No driver is bound: load it (modprobe btusb) and look at dmesg.")
            }
            return .ok("udev", "\(device.name): \(device.hardware)")
        }
    }

    /// What udev says about the controller called `name` (`hci0`), for logs: "USB 0a12:0001 ..., driver btusb".
    static func adapterHardware(_ name: String) -> String? {
        udevDevices(subsystem: "bluetooth", devtype: "host")?.first { $0.name == name }?.hardware
    }

    /// The devices of `subsystem` (only those of `devtype` when given), with their bus, USB ids and names and
    /// driver; `nil` when udev cannot be asked.
    static func udevDevices(subsystem: String, devtype: String?) -> [UdevDevice]? {
        guard let udev = udev_new() else { return nil }
        defer { udev_unref(udev) }
        guard let enumerate = udev_enumerate_new(udev) else { return nil }
        defer { udev_enumerate_unref(enumerate) }
        guard udev_enumerate_add_match_subsystem(enumerate, subsystem) >= 0,
            udev_enumerate_scan_devices(enumerate) >= 0
        else { return nil }
        var devices: [UdevDevice] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            entry = udev_list_entry_get_next(current)
            guard let path = udev_list_entry_get_name(current),
                let device = udev_device_new_from_syspath(udev, path)
            else { continue }
            defer { udev_device_unref(device) }
            if let devtype, string(udev_device_get_devtype(device)) != devtype { continue }
            devices.append(describe(device))
        }
        return devices.sorted { $0.name < $1.name }
    }

    private static func describe(_ device: OpaquePointer) -> UdevDevice {
        var result = UdevDevice(name: string(udev_device_get_sysname(device)) ?? "?")
        var parent = udev_device_get_parent(device)
        while let current = parent {
            if result.bus == nil { result.bus = string(udev_device_get_subsystem(current)) }
            if result.driver == nil { result.driver = string(udev_device_get_driver(current)) }
            parent = udev_device_get_parent(current)
        }
        if let usb = udev_device_get_parent_with_subsystem_devtype(device, "usb", "usb_device") {
            result.vendorID = string(udev_device_get_sysattr_value(usb, "idVendor"))
            result.productID = string(udev_device_get_sysattr_value(usb, "idProduct"))
            result.vendor =
                string(udev_device_get_property_value(usb, "ID_VENDOR_FROM_DATABASE"))
                ?? string(udev_device_get_sysattr_value(usb, "manufacturer"))
            result.product =
                string(udev_device_get_property_value(usb, "ID_MODEL_FROM_DATABASE"))
                ?? string(udev_device_get_sysattr_value(usb, "product"))
        }
        return result
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    // MARK: HCI

    /// Asks the controllers directly, for when bluetoothd does not answer.
    static func checkHCI(sysfs: String) -> [DoctorFinding] {
        switch probeHCI(sysfs: sysfs) {
        case .noBluetoothInKernel:
            return [
                .error(
                    "kernel",
                    "the kernel has no Bluetooth support: the AF_BLUETOOTH socket family is missing "
                        + "(socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI) fails with EAFNOSUPPORT)",
                    fix: "Load the modules (modprobe bluetooth btusb) or use a kernel built with CONFIG_BT; in a "
                        + "container or VM, Bluetooth needs the host's kernel support and an adapter passed through.")
            ]
        case .socketFailed(let code):
            return [
                .warning(
                    "kernel", "cannot open an HCI socket to ask the controllers: \(String(cString: strerror(code)))",
                    fix: "Run wearhouse doctor as root to ask the controllers directly.")
            ]
        case .controllers(let controllers):
            guard !controllers.isEmpty else {
                return [
                    .error(
                        "controller", "the kernel has Bluetooth but no controller",
                        fix: "Plug in an adapter; dmesg | grep -i bluetooth shows why one did not register.")
                ]
            }
            return controllers.map { controller in
                let name = "\(controller.name) (\(controller.address), \(controller.bus))"
                if !controller.lowEnergy {
                    return .error(
                        "controller", "controller \(name) does not support Bluetooth LE",
                        fix: "Use an adapter with Bluetooth 4.0 (LE) or later.")
                }
                if !controller.up {
                    return .warning(
                        "controller", "controller \(name) is down",
                        fix: "Start bluetoothd, which brings it up (systemctl start bluetooth).")
                }
                return .ok("controller", "controller \(name) is up and supports LE")
            }
        }
    }

    /// Opens an HCI socket (to tell a kernel without Bluetooth from one without controllers), then reads each
    /// `hciN` listed in sysfs with `hci_devinfo`.
    static func probeHCI(sysfs: String) -> HCIProbe {
        let descriptor = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        if descriptor < 0 {
            let code = errno
            return code == EAFNOSUPPORT ? .noBluetoothInKernel : .socketFailed(code)
        }
        close(descriptor)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: sysfs + "/class/bluetooth")) ?? []
        let ids = names.compactMap { name in name.hasPrefix("hci") ? Int32(name.dropFirst(3)) : nil }.sorted()
        var controllers: [HCIController] = []
        for id in ids {
            var info = hci_dev_info()
            guard hci_devinfo(id, &info) == 0 else { continue }
            var text = [CChar](repeating: 0, count: 18)
            _ = ba2str(&info.bdaddr, &text)
            let name = withUnsafeBytes(of: info.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let bus = hci_bustostr(Int32(info.type & 0x0f)).map { String(cString: $0) } ?? "unknown bus"
            controllers.append(
                HCIController(
                    name: name,
                    address: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
                    bus: bus, up: info.flags & (1 << UInt32(HCI_UP)) != 0,
                    lowEnergy: info.features.4 & UInt8(LMP_LE) != 0))
        }
        return .controllers(controllers)
    }
}
