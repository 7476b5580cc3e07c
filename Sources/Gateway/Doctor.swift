public import DBus
internal import Foundation
internal import Glibc

/// `wearhouse doctor`: checks what a user would check first when no samples arrive, and says what to fix.
///
/// In order: the configuration file; the bus and bluetoothd on it (`org.bluez` owned); its adapters (powered, LE
/// central); rfkill switches; the controllers udev knows (bus, vendor, product, driver); when bluetoothd does not
/// answer, the controllers themselves over HCI (and, when the kernel has no Bluetooth at all, exactly that); the
/// store; enrolled devices that send only to a bonded collector but are not bonded; the permissions of the user
/// running it.
///
/// ```swift
/// let findings = await Doctor(configurationPath: GatewayConfiguration.defaultPath).run()
/// let healthy = !findings.contains { $0.severity == .error }
/// ```
public struct Doctor: Sendable {
    /// The configuration file whose store and bus are checked (`nil`: the defaults).
    public var configurationPath: String?
    /// The bus to look for bluetoothd on, instead of the configuration's.
    public var bus: DBusAddress?
    /// The store URL to check, instead of the configuration's.
    public var storeURL: String?
    /// Where sysfs is (tests point it at a fixture).
    public var sysfs = "/sys"
    /// How long bus calls may take.
    public var timeout = Duration.seconds(5)

    public init(
        configurationPath: String? = GatewayConfiguration.defaultPath, bus: DBusAddress? = nil, storeURL: String? = nil
    ) {
        self.configurationPath = configurationPath
        self.bus = bus
        self.storeURL = storeURL
    }

    /// Runs every check; never throws (a failing check is a finding).
    public func run() async -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        var configuration = GatewayConfiguration()
        if let configurationPath {
            do {
                configuration = try GatewayConfiguration.load(path: configurationPath)
                findings.append(Self.configurationFinding(path: configurationPath))
                findings += Self.configurationModeFindings(path: configurationPath)
            } catch {
                findings.append(
                    .error(
                        "configuration", "\(error)",
                        fix: "Correct the file; every key and its default are in wearhouse.conf.example."))
            }
        }
        let bluetooth = await checkBlueZ(
            bus: bus ?? configuration.bluetooth.bus, adapter: configuration.bluetooth.adapter)
        findings += bluetooth.findings
        findings += Self.checkRfkill(sysfs: sysfs)
        findings += Self.checkUdev(bluezHasAdapters: bluetooth.adapterCount > 0)
        if !bluetooth.answered {
            findings += Self.checkHCI(sysfs: sysfs)
        }
        let store = await Self.inspectStore(url: storeURL ?? configuration.store.url)
        findings += store.findings
        findings += Self.bondingFindings(sensors: store.sensors ?? [], peripherals: bluetooth.peripherals)
        findings += Self.checkPermissions()
        return findings
    }

    static func configurationFinding(path: String) -> DoctorFinding {
        if access(path, F_OK) != 0 {
            return .ok("configuration", "no \(path): the defaults apply")
        }
        return .ok("configuration", "\(path) is valid")
    }

    /// A configuration file every user may read or write (it may hold a PostgreSQL password in `[store] url`).
    static func configurationModeFindings(path: String) -> [DoctorFinding] {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o007 != 0
        else { return [] }
        return [
            .warning(
                "configuration",
                "\(path) is open to every user (mode \(String(mode & 0o777, radix: 8))), and its [store] url may hold "
                    + "a password",
                fix: "chmod 0640 \(path) && chgrp \(serviceUser) \(path) (systemd-tmpfiles --create does this for "
                    + "/etc/wearhouse/wearhouse.conf).")
        ]
    }
}
