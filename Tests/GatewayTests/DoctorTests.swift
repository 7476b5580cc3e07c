import DBus
import Foundation
import GATT
import Health
import SQLiteStore
import TestSupport
import Testing

@testable import Gateway

@Suite(.timeLimit(.minutes(1))) struct DoctorTests {
    /// A fresh directory, removed afterwards.
    func withDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wearhouse-doctor-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// Whether this kernel has Bluetooth sockets at all (the test machines do not).
    static var kernelLacksBluetooth: Bool {
        let descriptor = socket(31, Int32(SOCK_RAW.rawValue), 1)
        if descriptor >= 0 { close(descriptor) }
        return descriptor < 0 && errno == EAFNOSUPPORT
    }

    @Test func rfkillBlocksAreErrors() async throws {
        try await withDirectory { sysfs in
            let rfkill = sysfs.appendingPathComponent("class/rfkill")
            for (name, type, soft, hard) in [
                ("rfkill0", "bluetooth", "1", "0"), ("rfkill1", "wlan", "1", "1"), ("rfkill2", "bluetooth", "0", "1"),
                ("rfkill3", "bluetooth", "0", "0"),
            ] {
                try write("hci\(name.last!)\n", to: rfkill.appendingPathComponent("\(name)/name"))
                try write(type + "\n", to: rfkill.appendingPathComponent("\(name)/type"))
                try write(soft + "\n", to: rfkill.appendingPathComponent("\(name)/soft"))
                try write(hard + "\n", to: rfkill.appendingPathComponent("\(name)/hard"))
            }
            let findings = Doctor.checkRfkill(sysfs: sysfs.path)
            #expect(findings.map(\.severity) == [.error, .error, .ok])
            #expect(findings[0].summary == "rfkill0 (hci0) is blocked in software")
            #expect(findings[0].fix == "Unblock it: rfkill unblock bluetooth.")
            #expect(findings[1].summary == "rfkill2 (hci2) is blocked by a hardware switch")
            #expect(
                Doctor.checkRfkill(sysfs: sysfs.appendingPathComponent("none").path) == [
                    .ok("rfkill", "no Bluetooth rfkill switch")
                ])
        }
    }

    /// libudev enumeration, on a subsystem every machine has.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/sys/class/net/lo")))
    func udevListsDevices() throws {
        let devices = try #require(Doctor.udevDevices(subsystem: "net", devtype: nil))
        #expect(devices.contains { $0.name == "lo" })
        #expect(Doctor.udevDevices(subsystem: "no-such-subsystem", devtype: nil) == [])
    }

    @Test func adapterFindings() {
        let on = AdapterInfo(
            address: "00:aa:01:00:00:01", name: "hci0", powered: true, discovering: false, supportsCentral: true)
        let off = AdapterInfo(
            address: "00:AA:01:00:00:02", name: "hci1", powered: false, discovering: false, supportsCentral: true)
        let classic = AdapterInfo(
            address: "00:AA:01:00:00:03", name: "hci2", powered: true, discovering: false, supportsCentral: false)
        #expect(Doctor.adapterFindings([], wanted: nil).map(\.severity) == [.error])
        #expect(
            Doctor.adapterFindings([on], wanted: nil) == [
                .ok("adapter", "adapter hci0 (00:AA:01:00:00:01) is powered and can act as an LE central")
            ])
        // Another usable adapter makes an unusable one a warning; alone it is an error.
        #expect(Doctor.adapterFindings([on, off], wanted: nil).map(\.severity) == [.ok, .warning])
        #expect(Doctor.adapterFindings([off, classic], wanted: nil).map(\.severity) == [.error, .error])
        #expect(Doctor.adapterFindings([off], wanted: nil)[0].summary == "adapter hci1 (00:AA:01:00:00:02) is off")
        // The configured adapter decides.
        let configured = Doctor.adapterFindings([on, off], wanted: "00:aa:01:00:00:02")
        #expect(configured.map(\.severity) == [.ok, .error])
        #expect(configured.first?.summary.hasSuffix("(unused: bluetooth.adapter names another)") == true)
        let missing = Doctor.adapterFindings([on], wanted: "00:AA:01:00:00:09")
        #expect(missing.first?.summary == "the configured adapter 00:AA:01:00:00:09 is not there")
        #expect(missing.first?.severity == .error)
    }

    @Test func storeChecks() async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("health.db").path
            #expect(
                await Doctor.checkStore(url: path) == [
                    .ok("store", "no store at \(path) yet; it is created on the first write")
                ])
            #expect(await Doctor.checkStore(url: directory.path + "/missing/health.db").map(\.severity) == [.warning])
            let unreachable = "postgresql://someone:secret@/health?host=/nonexistent&connect_timeout=2"
            let refused = await Doctor.checkStore(url: unreachable)
            #expect(refused.map(\.severity) == [.error])
            #expect(!refused.description.contains("secret"))
            #expect(await Doctor.checkStore(url: directory.path).map(\.severity) == [.error])

            _ = try SQLiteHealthStore(path: path)
            #expect(
                await Doctor.checkStore(url: "sqlite:" + path) == [
                    .ok("store", "\(path) opens and passes its integrity check")
                ])
            let text = directory.appendingPathComponent("notes.txt")
            try write("not a database, but longer than sixteen bytes\n", to: text)
            #expect(
                await Doctor.checkStore(url: text.path) == [
                    .error(
                        "store", "\(text.path) is not a SQLite database",
                        fix: "Point [store] url at the store, or move the file away.")
                ])
        }
    }

    /// A store others may read, and a configuration file (which may hold a PostgreSQL password) open to every
    /// user, are warnings that name the files; 0600 and 0640 files are not.
    @Test func healthDataAndConfigurationOpenToOthersAreWarnings() async throws {
        try await withDirectory { directory in
            let path = directory.appendingPathComponent("health.db").path
            _ = try SQLiteHealthStore(path: path)
            #expect(Doctor.checkStoreModes(path) == [])
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
            #expect(Doctor.checkStoreModes(path) == [])
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o660], ofItemAtPath: path + "-access")
            let findings = await Doctor.checkStore(url: path)
            let warning = try #require(findings.first)
            #expect(warning.severity == .warning)
            #expect(warning.summary.contains("\(path) (mode 644)"))
            #expect(warning.summary.contains("\(path)-access (mode 660)"))

            let configuration = directory.appendingPathComponent("wearhouse.conf")
            try write("[store]\nurl = postgresql://gw:secret@db/health\n", to: configuration)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: configuration.path)
            let open = Doctor.configurationModeFindings(path: configuration.path)
            #expect(open.map(\.severity) == [.warning])
            #expect(open.first?.summary.contains("mode 644") == true)
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: configuration.path)
            #expect(Doctor.configurationModeFindings(path: configuration.path) == [])
        }
    }

    /// bluetoothd missing on the bus: an error that says so, then the kernel is asked directly over HCI.
    @Test func emptyBusReportsBluetoothdMissingAndAsksTheKernel() async throws {
        try await withDirectory { directory in
            try await withPrivateBus { bus in
                var doctor = Doctor(
                    configurationPath: directory.appendingPathComponent("wearhouse.conf").path,
                    bus: .address(bus.address), storeURL: directory.appendingPathComponent("health.db").path)
                doctor.sysfs = directory.path
                let findings = await doctor.run()
                let bluetoothd = try #require(findings.first { $0.check == "bluetoothd" })
                #expect(bluetoothd.severity == .error)
                #expect(bluetoothd.summary.hasPrefix("bluetoothd is not running: nobody owns org.bluez"))
                #expect(!findings.contains { $0.check == "adapter" })
                let kernel = findings.first { $0.check == "kernel" || $0.check == "controller" }
                #expect(kernel != nil)
                if Self.kernelLacksBluetooth {
                    #expect(kernel?.severity == .error)
                    #expect(kernel?.summary.contains("AF_BLUETOOTH socket family is missing") == true)
                    #expect(kernel?.summary.contains("EAFNOSUPPORT") == true)
                }
                #expect(findings.first?.check == "configuration" && findings.first?.severity == .ok)
            }
        }
    }

    @Test func unreachableBusAndBadConfigurationAreErrors() async throws {
        try await withDirectory { directory in
            let configuration = directory.appendingPathComponent("wearhouse.conf")
            try write("[writer]\nbatchsize = 5\n", to: configuration)
            var doctor = Doctor(
                configurationPath: configuration.path, bus: .address("unix:path=\(directory.path)/no-bus"),
                storeURL: directory.appendingPathComponent("health.db").path)
            doctor.sysfs = directory.path
            let findings = await doctor.run()
            #expect(
                findings.first
                    == .error(
                        "configuration",
                        "\(configuration.path):2: unknown key 'batchsize' in [writer] (did you mean 'batch-size'?)",
                        fix: "Correct the file; every key and its default are in wearhouse.conf.example."))
            #expect(findings.first { $0.check == "bus" }?.severity == .error)
        }
    }
    /// Devices that send only to a bonded collector: bonded or not, in bluetoothd's eyes when it answered, in the
    /// registry's otherwise; a strap is not mentioned.
    @Test func bondingIsExplainedForGlucoseMetersAndCuffs() {
        let adapter = "00:AA:01:00:00:01"
        func sensor(_ address: String, _ service: BluetoothUUID, paired: Bool, label: String? = nil) -> RegisteredSensor
        {
            RegisteredSensor(
                address: address, label: label, services: [service.description], paired: paired,
                enrolledAt: Instant(milliseconds: 0))
        }
        let sensors = [
            sensor("C0:FF:EE:00:00:03", .bloodPressureService, paired: true),
            sensor("C0:FF:EE:00:00:01", .glucoseService, paired: true, label: "Meter"),
            sensor("C0:FF:EE:00:00:02", .heartRateService, paired: false),
            sensor("C0:FF:EE:00:00:04", .glucoseService, paired: true),
        ]
        let peripherals = [
            PeripheralInfo(id: PeripheralID(adapter: adapter, address: "C0:FF:EE:00:00:01"), paired: false),
            PeripheralInfo(id: PeripheralID(adapter: adapter, address: "C0:FF:EE:00:00:02")),
            PeripheralInfo(id: PeripheralID(adapter: adapter, address: "C0:FF:EE:00:00:03"), paired: true),
        ]
        let findings = Doctor.bondingFindings(sensors: sensors, peripherals: peripherals)
        #expect(findings.map(\.severity) == [.warning, .ok, .warning])
        #expect(findings[0].summary.contains("sensor C0:FF:EE:00:00:01 (Meter) is a glucose meter that is not bonded"))
        #expect(findings[0].fix == "Put it in pairing mode and run: wearhouse pair C0:FF:EE:00:00:01")
        #expect(findings[1].summary == "sensor C0:FF:EE:00:00:03 is a blood pressure cuff and is bonded")
        #expect(findings[2].summary.contains("bluetoothd does not know it"))
        // Without bluetoothd's answer, the registry's record at pairing time.
        let offline = Doctor.bondingFindings(sensors: sensors, peripherals: nil)
        #expect(offline.map(\.severity) == [.ok, .ok, .ok])
    }
}
