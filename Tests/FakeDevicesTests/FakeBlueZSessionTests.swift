import DBus
import FakeDevices
import Foundation
import GATT
import TestSupport
import Testing

/// FakeBlueZ: pairing, agents, device removal, changed services, session lifetimes and the real-time clock.
@Suite(.serialized) struct FakeBlueZSessionTests {
    static let lockedAddress = "C0:FF:EE:00:00:05"
    static let lockedPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_05"
    static let locked = FakeBlueZScenario.Peripheral(
        kind: .chestStrap, address: lockedAddress, seed: 2, faults: .init(requiresPairing: true), known: true)
    static let updating = FakeBlueZScenario.Peripheral(
        kind: .chestStrap, address: "C0:FF:EE:00:00:06", seed: 4, faults: .init(firmwareUpdateAfterSeconds: 10),
        known: true)
    static let updatingPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_06"
    static let locationUUID = "00002a38-0000-1000-8000-00805f9b34fb"
    static let hrmUUID = "00002a37-0000-1000-8000-00805f9b34fb"
    static let scenario = FakeBlueZScenario(peripherals: [locked, updating])

    @Test func readsNeedPairingOnAStrapThatRequiresIt() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.lockedPath)
            let location = try await fixture.characteristicPath(Self.locationUUID, of: Self.lockedPath)
            let refused = await #expect(throws: DBusError.self) {
                try await fixture.call(location, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
            }
            // BlueZ 5.66 turns ATT 0x05 (insufficient authentication) into NotPermitted "Not paired"
            // (docs/bluez.md, F10).
            #expect(refused?.name == "org.bluez.Error.NotPermitted")
            #expect(refused?.message == "Not paired")
            try await fixture.call(Self.lockedPath, "org.bluez.Device1", "Pair")
            try await fixture.log.wait("Paired=true") { $0.contains { $0.changes("Paired", to: .boolean(true)) } }
            let value = try await fixture.call(
                location, "org.bluez.GattCharacteristic1", "ReadValue", [.vardict([:])])
            #expect(value.first?.bytesValue == [1])
            let again = await #expect(throws: DBusError.self) {
                try await fixture.call(Self.lockedPath, "org.bluez.Device1", "Pair")
            }
            #expect(again?.name == "org.bluez.Error.AlreadyExists")
        }
    }

    @Test func agentManagerKeepsOneAgentPerClient() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            let manager = "org.bluez.AgentManager1"
            try await fixture.call(
                "/org/bluez", manager, "RegisterAgent", [.objectPath("/agent"), .string("NoInputNoOutput")])
            let twice = await #expect(throws: DBusError.self) {
                try await fixture.call("/org/bluez", manager, "RegisterAgent", [.objectPath("/agent"), .string("")])
            }
            #expect(twice?.name == "org.bluez.Error.AlreadyExists")
            try await fixture.call("/org/bluez", manager, "RequestDefaultAgent", [.objectPath("/agent")])
            #expect(await fixture.fake.registeredAgents.values.contains("/agent NoInputNoOutput"))
            try await fixture.call("/org/bluez", manager, "UnregisterAgent", [.objectPath("/agent")])
            let gone = await #expect(throws: DBusError.self) {
                try await fixture.call("/org/bluez", manager, "UnregisterAgent", [.objectPath("/agent")])
            }
            #expect(gone?.name == "org.bluez.Error.DoesNotExist")
            let bad = await #expect(throws: DBusError.self) {
                try await fixture.call("/org/bluez", manager, "RegisterAgent", [.objectPath("/a"), .string("Psychic")])
            }
            #expect(bad?.name == "org.bluez.Error.InvalidArguments")
        }
    }

    @Test func removeDeviceDisconnectsAndRemovesEveryObject() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.lockedPath)
            fixture.log.clear()
            try await fixture.call(
                "/org/bluez/hci0", "org.bluez.Adapter1", "RemoveDevice", [.objectPath(Self.lockedPath)])
            let signals = try await fixture.log.wait("device removed") {
                $0.contains { $0.member == "InterfacesRemoved" && $0.arguments.first == .objectPath(Self.lockedPath) }
            }
            #expect(signals.contains { $0.changes("Connected", to: .boolean(false)) })
            let objects = try await fixture.client.managedObjects(destination: "org.bluez")
            #expect(!objects.keys.contains { $0.hasPrefix(Self.lockedPath) })
            let stale = await #expect(throws: DBusError.self) {
                try await fixture.call(Self.lockedPath, "org.bluez.Device1", "Connect")
            }
            #expect(stale?.name == "org.freedesktop.DBus.Error.UnknownObject")
        }
    }

    @Test func changedServicesReplaceTheCachedObjectsOnReconnect() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.updatingPath)
            let before = try await fixture.characteristicPath(Self.hrmUUID, of: Self.updatingPath)
            try await fixture.call(Self.updatingPath, "org.bluez.Device1", "Disconnect")
            await fixture.fake.advance(by: .seconds(15))
            fixture.log.clear()
            try await fixture.connectAndResolve(Self.updatingPath)
            let after = try await fixture.characteristicPath(Self.hrmUUID, of: Self.updatingPath)
            #expect(before != after)
            try await fixture.log.wait("the new GATT objects") { signals in
                signals.contains { $0.adds("org.bluez.GattCharacteristic1") }
            }
            let signals = fixture.log.all
            let removed = try #require(signals.firstIndex { $0.member == "InterfacesRemoved" })
            let added = try #require(signals.firstIndex { $0.adds("org.bluez.GattCharacteristic1") })
            let resolved = try #require(signals.firstIndex { $0.changes("ServicesResolved", to: .boolean(true)) })
            // The old objects go, ServicesResolved=true, then the new objects (docs/bluez.md, F3).
            #expect(removed < resolved && resolved < added)
        }
    }

    @Test func notifySessionsSurviveReconnectsAndEndWithTheirClient() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            try await fixture.connectAndResolve(Self.updatingPath)
            let hrm = try await fixture.characteristicPath(Self.hrmUUID, of: Self.updatingPath)
            let other = try await DBusConnection.connect(to: .address(fixture.daemon.address))
            _ = try await other.call(
                "org.bluez", path: hrm, interface: "org.bluez.GattCharacteristic1", member: "StartNotify")
            try await fixture.log.wait("Notifying=true") { $0.contains { $0.changes("Notifying", to: .boolean(true)) } }
            // Reconnect: the session stays and values flow again.
            try await fixture.call(Self.updatingPath, "org.bluez.Device1", "Disconnect")
            try await fixture.connectAndResolve(Self.updatingPath)
            fixture.log.clear()
            await fixture.fake.advance(by: .seconds(3))
            try await fixture.log.wait("values after reconnect") {
                $0.filter { $0.changes("Value", at: hrm) }.count >= 3
            }
            // The client leaves the bus: its session ends, Notifying=false.
            await other.close()
            try await fixture.log.wait("Notifying=false") {
                $0.contains { $0.changes("Notifying", to: .boolean(false), at: hrm) }
            }
            fixture.log.clear()
            await fixture.fake.advance(by: .seconds(3))
            try await Task.sleep(for: .milliseconds(100))
            #expect(!fixture.log.all.contains { $0.changes("Value", at: hrm) })
            #expect(await fixture.fake.emissionErrors.isEmpty)
        }
    }

    @Test func aDeviceOutOfRangeFailsToConnectAsBlueZDoes() async throws {
        let away = FakeBlueZScenario.Peripheral(
            kind: .wristMonitor, address: "C0:FF:EE:00:00:07", nearby: false, known: true)
        try await FakeBlueZFixture.run(FakeBlueZScenario(peripherals: [away])) { fixture in
            let failed = await #expect(throws: DBusError.self) {
                try await fixture.call("/org/bluez/hci0/dev_C0_FF_EE_00_00_07", "org.bluez.Device1", "Connect")
            }
            #expect(failed?.name == "org.bluez.Error.Failed")
            #expect(failed?.message == "le-connection-abort-by-local")
            // Discovery without a filter does not report it either.
            try await fixture.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            try await Task.sleep(for: .milliseconds(100))
            #expect(!fixture.log.all.contains { $0.changes("RSSI") || $0.adds("org.bluez.Device1") })
        }
    }

    @Test func realTimeModeAdvancesWithTheWallClock() async throws {
        try await FakeBlueZFixture.run(Self.scenario) { fixture in
            let fake = fixture.fake
            let runner = Task { await fake.runInRealTime(interval: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(300))
            runner.cancel()
            await runner.value
            let now = await fake.now
            #expect(now >= .milliseconds(200) && now < .seconds(5))
        }
    }
}
