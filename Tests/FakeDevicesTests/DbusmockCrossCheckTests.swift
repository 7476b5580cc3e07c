import BlueZ
import DBus
import Foundation
import GATT
import Support
import TestSupport
import Testing

/// The production `BlueZCentral` against a bluetoothd fake nobody on the team wrote: python-dbusmock's `bluez5`
/// template (Debian's `python3-dbusmock`, which `make test` installs), extended by our Heart Rate GATT template
/// `Tests/Resources/dbusmock/bluez5_gatt.py`. The device keeps bluez5's wrongly typed advertising properties
/// (`docs/bluez.md`: ManufacturerData `aa{qv}`, ServiceData `aa{sv}`, AdvertisingFlags `aay`, AdvertisingData
/// `aa{yv}`), which the client must not trip over.
@Suite(.serialized, .timeLimit(.minutes(1))) struct DbusmockCrossCheckTests {
    static let adapter = "00:01:02:03:04:05"  // bluez5's AddAdapter derives it from the last digit of "hci0"
    static let strap = PeripheralID(adapter: adapter, address: "C0:FF:EE:00:11:22")
    static let devicePath = "/org/bluez/hci0/dev_C0_FF_EE_00_11_22"

    @Test(.enabled(if: Dbusmock.isInstalled, Dbusmock.missing))
    func discoverConnectReadAndNotify() async throws {
        try await Dbusmock.run { mock, bus in
            try await mock.call("AddAdapter", [.string("hci0"), .string("wearhouse-gateway")])
            let central = try await BlueZCentral.start(on: bus, agentCapability: "NoInputNoOutput")
            let events = EventLog.collecting(central.events())
            do {
                try await crossCheck(central, mock, events)
            } catch {
                await central.shutdown(disconnecting: [Self.strap])
                throw error
            }
            await central.shutdown(disconnecting: [Self.strap])
            // The pairing agent registered (and left) through bluez5's AgentManager1.
            #expect(
                try await mock.calls("RegisterAgent", on: "/org/bluez") == [
                    ["/org/wearhouse/agent", "NoInputNoOutput"]
                ])
            #expect(try await mock.calls("UnregisterAgent", on: "/org/bluez") == [["/org/wearhouse/agent"]])
        }
    }

    private func crossCheck(_ central: BlueZCentral, _ mock: Dbusmock, _ events: EventLog) async throws {
        #expect(try await central.chooseAdapter(nil).address == Self.adapter)
        try await central.startDiscovery(services: [.heartRateService], on: nil)
        try await events.wait("discovering") { _ in try await central.adapters().first?.discovering == true }

        // bluez5 creates the device without advertised services (and with its wrongly typed advertising
        // properties): known, but not reported by a discovery filtered on heart rate ...
        let added = try await mock.call(
            "AddDevice", [.string("hci0"), .string(Self.strap.address), .string("H10 1234")])
        #expect(added.first?.stringValue == Self.devicePath)
        try await events.wait("the device in the cache") { _ in
            try await central.knownPeripherals().contains { $0.id == Self.strap }
        }
        let raw = try #require(await central.cache.properties(at: Self.devicePath)?["org.bluez.Device1"])
        #expect(raw["ManufacturerData"]?.type == .array(.dictionary(key: .uint16, value: .variant)))
        #expect(raw["AdvertisingFlags"]?.type == .array(.array(.byte)))

        // ... until it advertises the Heart Rate service.
        try await mock.call(
            "Advertise",
            [
                .objectPath(Self.devicePath), .strings([BluetoothUUID.heartRateService.description]),
                .int16(-61),
            ])
        let discovered = try await events.wait("discovered") { $0.discovered.contains(Self.strap) }
        let info = try #require(
            discovered.compactMap { if case .discovered(let info) = $0, info.id == Self.strap { info } else { nil } }
                .last)
        #expect(info.name == "H10 1234")
        #expect(info.rssi == -61)
        #expect(info.services == [.heartRateService])
        // The InterfacesAdded without services (forwarded in order, before the advertisement) was filtered out.
        #expect(
            discovered.allSatisfy { event in
                guard case .discovered(let info) = event else { return true }
                return info.services.contains(.heartRateService)
            })

        try await mock.call("AddHeartRateService", [.objectPath(Self.devicePath)])
        try await central.connect(Self.strap, timeout: .seconds(5))
        let connected = try await events.wait("connected and resolved") {
            $0.contains(.servicesResolved(Self.strap, resolved: true))
        }
        let connectedAt = try #require(connected.firstIndex(of: .connectionChanged(Self.strap, connected: true)))
        #expect(connectedAt < connected.firstIndex(of: .servicesResolved(Self.strap, resolved: true))!)
        #expect(try await central.knownPeripherals().first { $0.id == Self.strap }?.servicesResolved == true)

        let characteristics = try await central.characteristics(of: Self.strap)
        let location = try #require(characteristics.first { $0.uuid == .bodySensorLocation })
        #expect(location.service == .heartRateService)
        #expect(location.handle == Self.devicePath + "/service0010/char0014")
        #expect(try BodySensorLocation(decoding: try await central.read(location, of: Self.strap)) == .chest)

        let measurement = try #require(characteristics.first { $0.uuid == .heartRateMeasurement })
        #expect(measurement.properties.contains(.notify))
        try await central.startNotifications(measurement, of: Self.strap, mode: .properties)
        // Flags 0x10 (RR intervals present), 72 bpm, one RR interval of 1024/1024 s.
        try await mock.call("EmitNotification", [.objectPath(measurement.handle), .bytes([0x10, 72, 0x00, 0x04])])
        let notified = try await events.wait("a notification") { !$0.notifications.isEmpty }
        let notification = try #require(notified.notifications.first)
        #expect(notification.peripheral == Self.strap && notification.characteristic == .heartRateMeasurement)
        let heartRate = try HeartRateMeasurement(decoding: notification.value)
        #expect(heartRate.heartRate == 72)
        #expect(Array(heartRate.rrIntervals) == [1024])
        // The read's echo (PropertiesChanged(Value) of the location) was not a notification.
        #expect(notified.notifications.count == 1)
        #expect(await central.statistics().notifications == 1)

        try await central.disconnect(Self.strap)
        try await events.wait("disconnected") { $0.contains(.connectionChanged(Self.strap, connected: false)) }

        // bluez5's RemoveDevice announces the device only (its GATT objects stay behind in the mock); the client
        // drops what was below it.
        try await central.remove(Self.strap)
        try await events.wait("removed") { $0.contains(.peripheralRemoved(Self.strap)) }
        await #expect(throws: CentralError.self) { try await central.characteristics(of: Self.strap) }
        #expect(await central.cache.characteristics(of: Self.strap).isEmpty)

        // bluez5's RemoveAdapter leaves its devices without InterfacesRemoved, on purpose (R3).
        let other = PeripheralID(adapter: Self.adapter, address: "C0:FF:EE:00:11:33")
        try await mock.call("AddDevice", [.string("hci0"), .string(other.address), .string("H10 5678")])
        try await events.wait("the other device") { _ in
            try await central.knownPeripherals().contains { $0.id == other }
        }
        try await mock.call("RemoveAdapter", [.string("hci0")])
        try await events.wait("adapter gone") {
            $0.contains(.adapterRemoved(Self.adapter)) && $0.contains(.peripheralRemoved(other))
        }
        #expect(try await central.knownPeripherals().isEmpty)
        #expect(try await central.adapters().isEmpty)
        #expect(await central.cache.malformedSignals == 0)
    }
}

/// python-dbusmock serving `bluez5` plus our GATT template on a private bus, controlled through `org.bluez.Mock`.
struct Dbusmock {
    static let python = "/usr/bin/python3"
    /// Tests/Resources/dbusmock/bluez5_gatt.py, found from this file.
    static let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Resources/dbusmock/bluez5_gatt.py").path

    static let missing: Comment =
        "python3-dbusmock is not installed (apt-get install python3-dbusmock; make deps and make test install it)"

    /// Whether Debian's python3 can import dbusmock (the PATH's python3 may be another build without dbus).
    static let isInstalled: Bool = {
        let probe = try? ChildProcess.start(
            python, ["-c", "import dbusmock.templates.bluez5, gi.repository.GLib"], output: .null, errors: .null)
        return probe?.wait().succeeded ?? false
    }()

    let control: DBusConnection

    /// Calls a method of `org.bluez.Mock` on `/`.
    @discardableResult
    func call(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await control.call(
            "org.bluez", path: "/", interface: "org.bluez.Mock", member: member, arguments: arguments)
    }

    /// The string arguments of every call of `method` on the mock object at `path` (its call log).
    func calls(_ method: String, on path: String) async throws -> [[String]] {
        let reply = try await control.call(
            "org.bluez", path: path, interface: "org.freedesktop.DBus.Mock", member: "GetMethodCalls",
            arguments: [.string(method)])
        return (reply.first?.arrayElements ?? []).map { call in
            guard case .struct(let members) = call, members.count == 2 else { return [] }
            return (members[1].arrayElements ?? []).compactMap { $0.unwrapped.stringValue }
        }
    }

    /// Starts a private bus and the mock on it (its log in the bus directory), waits for `org.bluez`, runs `body`
    /// with the mock's control and a separate connection for the client, then kills the mock and stops the bus.
    static func run(_ body: (Dbusmock, DBusConnection) async throws -> Void) async throws {
        try await withPrivateBus { daemon in
            let log = daemon.directory.appendingPathComponent("dbusmock.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = try ChildProcess.start(
                python, ["-m", "dbusmock", "--template", template, "-l", log.path],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": daemon.address, "PATH": "/usr/bin:/bin"],
                output: .file(log.path, append: true), errors: .sameAsOutput)
            defer {
                process.signal(SIGKILL)
                process.wait()
            }
            let control = try await DBusConnection.connect(to: .address(daemon.address))
            let bus = try await DBusConnection.connect(to: .address(daemon.address))
            do {
                try await waitForOwner(control, process: process, log: log)
                try await body(Dbusmock(control: control), bus)
            } catch {
                await bus.close()
                await control.close()
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                Issue.record("dbusmock's log:\n\(output.suffix(4000))")
                throw error
            }
            await bus.close()
            await control.close()
        }
    }

    private static func waitForOwner(_ control: DBusConnection, process: ChildProcess, log: URL) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? await control.nameOwner("org.bluez")) == nil {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw DbusmockError(message: "dbusmock did not take org.bluez")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct DbusmockError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
