import DBus
import FakeDevices
import Foundation
import GATT
import TestSupport
import Testing

/// FakeBlueZ on a private dbus-daemon, driven by a plain DBusConnection client.
@Suite(.serialized) struct FakeBlueZTests {
    static let strapAddress = "C0:FF:EE:00:00:01"
    static let strapPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
    static let hrmUUID = "00002a37-0000-1000-8000-00805f9b34fb"

    static let strap = FakeBlueZScenario.Peripheral(
        kind: .chestStrap, address: strapAddress, seed: 7, faults: .init(duplicateEvery: 3), known: true)
    static let footpod = FakeBlueZScenario.Peripheral(kind: .footpod, address: "C0:FF:EE:00:00:02", seed: 3)
    static let scenario = FakeBlueZScenario(peripherals: [strap, footpod])

    @Test func managedObjectsShowTheAdapterAndKnownDevicesWithBlueZTypes() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            let objects = try await fixture.client.managedObjects(destination: "org.bluez")
            #expect(objects["/org/bluez"]?["org.bluez.AgentManager1"] != nil)
            let adapter = try #require(objects["/org/bluez/hci0"]?["org.bluez.Adapter1"])
            #expect(adapter["Address"] == .string("00:AA:01:00:00:01"))
            #expect(adapter["AddressType"] == .string("public"))
            #expect(adapter["Powered"] == .boolean(true))
            #expect(adapter["Discovering"] == .boolean(false))
            #expect(adapter["Class"]?.type == .uint32)
            #expect(adapter["UUIDs"]?.type == .array(.string))
            #expect(adapter["Roles"]?.stringArrayValue?.contains("central") == true)
            #expect(adapter["Modalias"]?.type == .string)
            // The known strap is there before any discovery, without RSSI; the footpod is not.
            let device = try #require(objects[Self.strapPath]?["org.bluez.Device1"])
            #expect(device["Address"] == .string(Self.strapAddress))
            #expect(device["AddressType"] == .string("public"))
            #expect(device["Adapter"] == .objectPath("/org/bluez/hci0"))
            for flag in ["Paired", "Bonded", "Trusted", "Blocked", "Connected", "ServicesResolved", "LegacyPairing"] {
                #expect(device[flag] == .boolean(false), "\(flag)")
            }
            #expect(device["UUIDs"]?.stringArrayValue?.contains("0000180d-0000-1000-8000-00805f9b34fb") == true)
            #expect(device["RSSI"] == nil)
            #expect(objects["/org/bluez/hci0/dev_C0_FF_EE_00_00_02"] == nil)
            // Standard interfaces listed as bluetoothd does; no GATT objects before a connection.
            #expect(objects[Self.strapPath]?["org.freedesktop.DBus.Properties"] != nil)
            #expect(!objects.keys.contains { $0.contains("/service") })
        }
    }

    @Test func discoveryReportsNearbyDevicesMatchingTheFilter() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            let adapter = "/org/bluez/hci0"
            let filter: DBusValue = .vardict([
                "UUIDs": .strings(["00001814-0000-1000-8000-00805f9b34fb"]), "Transport": .string("le"),
            ])
            try await fixture.call(adapter, "org.bluez.Adapter1", "SetDiscoveryFilter", [filter])
            try await fixture.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            let signals = try await fixture.log.wait("footpod found") {
                $0.contains { $0.adds("org.bluez.Device1", under: "/org/bluez/hci0/dev_C0_FF_EE_00_00_02") }
            }
            #expect(signals.first?.changes("Discovering", to: .boolean(true)) == true)
            let added = try #require(signals.first { $0.adds("org.bluez.Device1") })
            let properties = added.arguments[1].stringKeyedValue?["org.bluez.Device1"]?.stringKeyedValue
            #expect(properties?["RSSI"]?.type == .int16)
            #expect(properties?["Name"] == .string("Fake Footpod"))
            // The strap does not advertise RSC: the filter leaves it out.
            #expect(!signals.contains { $0.path == Self.strapPath })
            await #expect(throws: DBusError.self) {
                try await fixture.call(adapter, "org.bluez.Adapter1", "StartDiscovery")
            }
            try await fixture.call(adapter, "org.bluez.Adapter1", "StopDiscovery")
            try await fixture.log.wait("Discovering=false") {
                $0.contains { $0.changes("Discovering", to: .boolean(false)) }
            }
        }
    }

    @Test func connectFollowsBlueZSignalOrderAndGATTObjectsAreCached() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            // 5.66 sends ServicesResolved=true before the GATT objects' InterfacesAdded (docs/bluez.md, F3).
            try await fixture.log.wait("the GATT objects") { signals in
                signals.contains { $0.adds("org.bluez.GattCharacteristic1", under: Self.strapPath) }
            }
            let signals = fixture.log.all
            let connected = try #require(signals.firstIndex { $0.changes("Connected", to: .boolean(true)) })
            let resolved = try #require(signals.firstIndex { $0.changes("ServicesResolved", to: .boolean(true)) })
            let gatt = signals.indices.filter { signals[$0].adds("org.bluez.GattService1", under: Self.strapPath) }
            let chars = signals.indices.filter {
                signals[$0].adds("org.bluez.GattCharacteristic1", under: Self.strapPath)
            }
            #expect(!gatt.isEmpty && !chars.isEmpty)
            #expect(connected < resolved)
            #expect((gatt + chars).allSatisfy { resolved < $0 })

            let objects = try await fixture.client.managedObjects(destination: "org.bluez")
            let services = objects.filter { $0.key.hasPrefix(Self.strapPath + "/service") && !$0.key.contains("/char") }
            let serviceUUIDs = Set(services.compactMap { $0.value["org.bluez.GattService1"]?["UUID"]?.stringValue })
            #expect(serviceUUIDs.contains("0000180d-0000-1000-8000-00805f9b34fb"))
            #expect(serviceUUIDs.contains("0000180a-0000-1000-8000-00805f9b34fb"))
            let hrm = try await fixture.characteristicPath(Self.hrmUUID, of: Self.strapPath)
            #expect(hrm.range(of: #"/service[0-9a-f]{4}/char[0-9a-f]{4}$"#, options: .regularExpression) != nil)
            let characteristic = try #require(objects[hrm]?["org.bluez.GattCharacteristic1"])
            #expect(characteristic["Flags"]?.stringArrayValue?.contains("notify") == true)
            #expect(characteristic["Value"]?.type == .array(.byte))
            #expect(characteristic["MTU"]?.type == .uint16)
            #expect(characteristic["Handle"] == nil)  // 5.66 has none (docs/bluez.md, F1)
            let service = try #require(objects[String(hrm.dropLast(9))])
            #expect(service["org.bluez.GattService1"]?["Device"] == .objectPath(Self.strapPath))

            // Disconnect: ServicesResolved=false, then Connected=false; GATT objects stay (cache).
            fixture.log.clear()
            try await fixture.call(Self.strapPath, "org.bluez.Device1", "Disconnect")
            let down = try await fixture.log.wait("Connected=false") {
                $0.contains { $0.changes("Connected", to: .boolean(false)) }
            }
            let unresolved = try #require(down.firstIndex { $0.changes("ServicesResolved", to: .boolean(false)) })
            let disconnected = try #require(down.firstIndex { $0.changes("Connected", to: .boolean(false)) })
            #expect(unresolved < disconnected)
            // Only Battery1 leaves the device (the battery plugin goes with the link); the GATT objects stay.
            let removed = down.filter { $0.member == "InterfacesRemoved" }
            #expect(removed.allSatisfy { $0.arguments.first == .objectPath(Self.strapPath) })
            #expect(removed.allSatisfy { $0.arguments.dropFirst().first == .strings(["org.bluez.Battery1"]) })

            // Reconnect: no GATT InterfacesAdded, the cached objects are resolved again; Battery1 comes back.
            fixture.log.clear()
            try await fixture.connectAndResolve(Self.strapPath)
            #expect(!fixture.log.all.contains { $0.member == "InterfacesAdded" && $0.adds("org.bluez.GattService1") })
            #expect(fixture.log.all.contains { $0.adds("org.bluez.Battery1") })
        }
    }

    @Test func readValueReturnsTheSimulatedBytes() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            var reference = Self.strap.script.makePeripheral()
            try await fixture.connectAndResolve(Self.strapPath)
            let reads: [(String, BluetoothUUID)] = [
                ("00002a38-0000-1000-8000-00805f9b34fb", .bodySensorLocation),
                ("00002a29-0000-1000-8000-00805f9b34fb", .manufacturerNameString),
                ("00002a24-0000-1000-8000-00805f9b34fb", .modelNumberString),
                ("00002a50-0000-1000-8000-00805f9b34fb", .pnpID),
            ]
            for (uuid, characteristic) in reads {
                let path = try await fixture.characteristicPath(uuid, of: Self.strapPath)
                let reply = try await fixture.call(
                    path, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
                let expected = try reference.read(characteristic)
                #expect(reply.first?.bytesValue == expected, "\(uuid)")
                #expect(!expected.isEmpty)
            }
            let location = try await fixture.characteristicPath(reads[0].0, of: Self.strapPath)
            let bytes = try await fixture.call(location, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
            #expect(try BodySensorLocation(decoding: bytes.first?.bytesValue ?? []) == .chest)
            // Not connected: Failed "Not connected". The link drops after Disconnect's reply, as in 5.66: the read
            // goes once Connected=false was sent.
            fixture.log.clear()
            try await fixture.call(Self.strapPath, "org.bluez.Device1", "Disconnect")
            _ = try await fixture.log.wait("Connected=false") {
                $0.contains { $0.changes("Connected", to: .boolean(false)) }
            }
            await #expect(throws: DBusError.self) {
                try await fixture.call(location, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
            }
        }
    }

    /// bluetoothd 5.66 answers `Disconnect` on a device that is not connected with success, and changes nothing
    /// (the BlueZ VM's fidelity scenario checks the real one).
    @Test func disconnectingADeviceThatIsNotConnectedSucceeds() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            try await fixture.call(Self.strapPath, "org.bluez.Device1", "Disconnect")
            _ = try await fixture.log.wait("Connected=false") {
                $0.contains { $0.changes("Connected", to: .boolean(false)) }
            }
            fixture.log.clear()
            let reply = try await fixture.call(Self.strapPath, "org.bluez.Device1", "Disconnect")
            #expect(reply.isEmpty)
            let connected = try await fixture.client.getProperty(
                "Connected", interface: "org.bluez.Device1", path: Self.strapPath, destination: "org.bluez")
            #expect(connected == .boolean(false))
            #expect(!fixture.log.all.contains { $0.member == "PropertiesChanged" })
        }
    }

    @Test func notificationsAreOnePropertiesChangedEachRepeatsIncluded() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            let hrm = try await fixture.characteristicPath(Self.hrmUUID, of: Self.strapPath)
            // Nothing is delivered before StartNotify.
            await fixture.fake.advance(by: .seconds(2))
            let before = try #require(await fixture.fake.groundTruth(of: Self.strapAddress)).emissions.count
            try await fixture.call(hrm, "org.bluez.GattCharacteristic1", "StartNotify")
            try await fixture.call(hrm, "org.bluez.GattCharacteristic1", "StartNotify")  // same sender: success
            try await fixture.log.wait("Notifying=true") { $0.contains { $0.changes("Notifying", to: .boolean(true)) } }
            await fixture.fake.advance(by: .seconds(20))
            let truth = try #require(await fixture.fake.groundTruth(of: Self.strapAddress))
            let sent = truth.emissions.dropFirst(before).filter { $0.characteristic == .heartRateMeasurement }
            let signals = try await fixture.log.wait("\(sent.count) notifications") {
                $0.filter { $0.changes("Value", at: hrm) }.count >= sent.count
            }
            let received = signals.filter { $0.changes("Value", at: hrm) }.compactMap {
                $0.arguments[1].stringKeyedValue?["Value"]?.bytesValue
            }
            #expect(sent.count >= 20)
            #expect(received == sent.map(\.value))
            #expect(truth.duplicates > 0)
            #expect(zip(received, received.dropFirst()).contains { $0 == $1 }, "a repeated value arrives twice")
            // Decoded, the values are the heart rates the strap measured (each duplicate once more).
            let rates = try received.map { try HeartRateMeasurement(decoding: $0).heartRate }
            let measured = Array(truth.heartRates.suffix(rates.count - sentDuplicates(sent)))
            #expect(isSubsequence(measured, of: rates))
            #expect(rates.count > measured.count)

            // StopNotify: Notifying=false and nothing more is delivered.
            try await fixture.call(hrm, "org.bluez.GattCharacteristic1", "StopNotify")
            try await fixture.log.wait("Notifying=false") {
                $0.contains { $0.changes("Notifying", to: .boolean(false)) }
            }
            fixture.log.clear()
            await fixture.fake.advance(by: .seconds(5))
            try await Task.sleep(for: .milliseconds(100))
            #expect(!fixture.log.all.contains { $0.changes("Value", at: hrm) })
        }
    }

    @Test func busctlShowsBlueZShapedPaths() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/busctl") else { return }
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.strapPath)
            let address = fixture.daemon.address
            // Off the pool: busctl's calls are answered by the FakeBlueZ tasks of this process.
            let tree = try await offPool {
                try runTool("/usr/bin/busctl", ["--address=\(address)", "tree", "--list", "org.bluez"])
            }
            let lines = tree.stdout.split(separator: "\n").map(String.init)
            #expect(tree.status == 0, "\(tree.stderr)")
            #expect(lines.contains("/org/bluez"))
            #expect(lines.contains("/org/bluez/hci0"))
            #expect(lines.contains(Self.strapPath))
            let charPattern = #"^/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service[0-9a-f]{4}/char[0-9a-f]{4}$"#
            #expect(lines.contains { $0.range(of: charPattern, options: .regularExpression) != nil })
        }
    }

    @Test func scenarioLoadsFromJSON() throws {
        let json = """
            {"adapterName": "lab", "peripherals": [
              {"kind": "chestStrap", "address": "c0:ff:ee:00:00:09", "seed": 4, "faults": {"duplicateEvery": 2}},
              {"kind": "infiniTime", "address": "C0:FF:EE:00:00:0A", "name": "Pine", "known": true, "rssi": -70}
            ]}
            """
        let scenario = try FakeBlueZScenario(json: Data(json.utf8))
        #expect(scenario.adapterName == "lab")
        #expect(scenario.peripherals.map(\.kind) == [.chestStrap, .infiniTime])
        #expect(scenario.peripherals[0].script.faults.duplicateEvery == 2)
        #expect(scenario.peripherals[0].script.address == "C0:FF:EE:00:00:09")
        #expect(scenario.peripherals[1].script.kind == .infiniTimeWatch)
        #expect(scenario.peripherals[1].script.name == "Pine")
        let encoded = try JSONEncoder().encode(scenario)
        #expect(try FakeBlueZScenario(json: encoded) == scenario)
    }
}

private func sentDuplicates(_ sent: [PeripheralEmission]) -> Int {
    zip(sent, sent.dropFirst()).filter { $0.value == $1.value }.count
}

/// Whether `needle` appears in order (not necessarily contiguously) in `haystack`.
private func isSubsequence<T: Equatable>(_ needle: [T], of haystack: [T]) -> Bool {
    var iterator = needle.makeIterator()
    var next = iterator.next()
    for element in haystack where element == next { next = iterator.next() }
    return next == nil
}
