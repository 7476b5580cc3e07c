import BlueZ
import DBus
import FakeDevices
import Foundation
import GATT
import Support
import TestSupport
import Testing

/// The production BlueZ client (`BlueZCentral`) against FakeBlueZ on a private dbus-daemon.
@Suite(.serialized) struct BlueZCentralTests {
    static let adapter = "00:AA:01:00:00:01"
    static let strap = PeripheralID(adapter: adapter, address: "C0:FF:EE:00:00:01")
    static let pod = PeripheralID(adapter: adapter, address: "C0:FF:EE:00:00:02")
    static let locked = PeripheralID(adapter: adapter, address: "C0:FF:EE:00:00:03")
    static let counter = PeripheralID(adapter: adapter, address: "C0:FF:EE:00:00:04")
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: strap.address, seed: 7, known: true),
        .init(kind: .footpod, address: pod.address, seed: 3, known: true),
        .init(kind: .chestStrap, address: locked.address, seed: 5, faults: .init(requiresPairing: true), known: true),
        .init(kind: .stepCounter, address: counter.address, seed: 9),
    ])

    @Test func discoveryIsFilteredByServiceAndAdaptersAreChosenByAddress() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            let adapter = try await fixture.central.chooseAdapter(nil)
            #expect(adapter.address == Self.adapter && adapter.powered)
            await #expect(throws: CentralError.self) { try await fixture.central.chooseAdapter("11:22:33:44:55:66") }

            try await fixture.central.startDiscovery(services: [.heartRateService], on: nil)
            // Starting twice is fine (bluetoothd's InProgress is "already running").
            try await fixture.central.startDiscovery(services: [.heartRateService], on: nil)
            await fixture.fake.reportNearbyDevices()
            let events = try await fixture.events.wait("the straps") { events in
                events.discovered.contains(Self.strap) && events.discovered.contains(Self.locked)
            }
            // The step counter is nearby but offers no heart-rate service.
            #expect(!events.discovered.contains(Self.counter))
            try await fixture.central.stopDiscovery(on: nil)
            try await fixture.central.stopDiscovery(on: nil)
        }
    }

    /// 5.66 sends `ServicesResolved=true` before the GATT objects' `InterfacesAdded` (docs/bluez.md, F3; FakeBlueZ
    /// too): the cache reads them with `GetManagedObjects` first, so every characteristic is there when the event
    /// is. The event is taken from its own stream, at once, with the cache's count of such reads.
    @Test func characteristicsAreThereWhenServicesResolvedIsReported() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            let events = fixture.central.events()
            try await fixture.central.connect(Self.strap, timeout: .seconds(5))
            var characteristics: [CharacteristicInfo] = []
            for await event in events where event == .servicesResolved(Self.strap, resolved: true) {
                characteristics = try await fixture.central.characteristics(of: Self.strap)
                break
            }
            #expect(characteristics.contains { $0.uuid == .heartRateMeasurement })
            #expect(characteristics.contains { $0.uuid == .manufacturerNameString })
            #expect(await fixture.central.cache.gattObjectsAdopted == 1)
        }
    }

    @Test func connectResolveReadAndNotifyFromTwoSensorsAtOnce() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            let central = fixture.central
            async let strapConnect: Void = central.connect(Self.strap, timeout: .seconds(5))
            async let podConnect: Void = central.connect(Self.pod, timeout: .seconds(5))
            _ = try await (strapConnect, podConnect)
            try await fixture.events.wait("both resolved") {
                $0.contains(.servicesResolved(Self.strap, resolved: true))
                    && $0.contains(.servicesResolved(Self.pod, resolved: true))
            }
            let strapCharacteristics = try await central.characteristics(of: Self.strap)
            let manufacturer = try #require(strapCharacteristics.first { $0.uuid == .manufacturerNameString })
            let name = try await central.read(manufacturer, of: Self.strap)
            #expect(!name.isEmpty)
            let location = try #require(strapCharacteristics.first { $0.uuid == .bodySensorLocation })
            #expect(try BodySensorLocation(decoding: try await central.read(location, of: Self.strap)) == .chest)

            let hrm = try #require(strapCharacteristics.first { $0.uuid == .heartRateMeasurement })
            let rsc = try #require(try await central.characteristics(of: Self.pod).first { $0.uuid == .rscMeasurement })
            try await central.startNotifications(hrm, of: Self.strap, mode: .properties)
            try await central.startNotifications(hrm, of: Self.strap, mode: .properties)  // idempotent
            try await central.startNotifications(rsc, of: Self.pod, mode: .properties)
            await fixture.fake.advance(by: .seconds(5))
            let events = try await fixture.events.wait("notifications from both") { events in
                let notifications = events.notifications
                return notifications.contains { $0.peripheral == Self.strap }
                    && notifications.contains { $0.peripheral == Self.pod }
            }
            for notification in events.notifications where notification.peripheral == Self.strap {
                #expect(notification.characteristic == .heartRateMeasurement)
                _ = try HeartRateMeasurement(decoding: notification.value)
            }
            // A read's echo (BlueZ updates Value on ReadValue) is not a notification.
            #expect(!events.notifications.contains { $0.characteristic == .manufacturerNameString })
            // Every notification the central counted reaches the listener.
            try await fixture.events.wait("every counted notification") { events in
                await central.statistics().notifications == events.notifications.count
            }
        }
    }

    @Test func connectFailuresAreClassifiedAsR8Says() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            await fixture.fake.setConnectFault(.abortByLocal, for: Self.strap.address)
            let aborted = await #expect(throws: CentralError.self) {
                try await fixture.central.connect(Self.strap, timeout: .seconds(5))
            }
            #expect(aborted?.kind == .transient)
            #expect(aborted?.detail.contains("le-connection-abort-by-local") == true)

            await fixture.fake.setConnectFault(.noReply, for: Self.strap.address)
            let timedOut = await #expect(throws: CentralError.self) {
                try await fixture.central.connect(Self.strap, timeout: .milliseconds(300))
            }
            #expect(timedOut?.kind == .timeout)
            // docs/bluez.md, R7: the Connect we gave up on was cancelled.
            #expect(await !fixture.fake.isConnecting(Self.strap.address))

            let unknown = PeripheralID(adapter: Self.adapter, address: "11:22:33:44:55:66")
            let missing = await #expect(throws: CentralError.self) {
                try await fixture.central.connect(unknown, timeout: .seconds(1))
            }
            #expect(missing?.kind == .deviceMissing)

            await fixture.fake.setConnectFault(nil, for: Self.strap.address)
            try await fixture.central.connect(Self.strap, timeout: .seconds(5))
            try await fixture.events.wait("resolved") { $0.contains(.servicesResolved(Self.strap, resolved: true)) }
        }
    }

    @Test func connectsOnOneAdapterAreSerialised() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            await fixture.fake.setConnectFault(.noReply, for: Self.strap.address)
            let central = fixture.central
            let first = Task { try await central.connect(Self.strap, timeout: .milliseconds(500)) }
            try await Task.sleep(for: .milliseconds(100))
            let second = Task { try await central.connect(Self.pod, timeout: .seconds(5)) }
            try await Task.sleep(for: .milliseconds(150))
            // The pod's Connect waits for the strap's to end.
            #expect(await !fixture.fake.isConnected(Self.pod.address))
            await #expect(throws: CentralError.self) { try await first.value }
            try await second.value
            #expect(await fixture.fake.isConnected(Self.pod.address))
        }
    }

    @Test func pairingGoesThroughOurAgentWhichAcceptsOnlyTheDeviceBeingPaired() async throws {
        try await CentralFixture.run(Self.scenario, agentCapability: "DisplayYesNo") { fixture in
            try await fixture.central.pair(Self.locked, timeout: .seconds(5))
            let agent = try #require(fixture.agent)
            #expect(agent.calls == ["RequestConfirmation"])
            try await fixture.events.wait("paired") { _ in
                try await fixture.central.knownPeripherals().first { $0.id == Self.locked }?.paired == true
            }
            try await fixture.central.pair(Self.locked, timeout: .seconds(5))  // AlreadyExists is success
            try await fixture.central.setTrusted(Self.locked, true)
            try await fixture.events.wait("trusted") { _ in
                try await fixture.central.knownPeripherals().first { $0.id == Self.locked }?.trusted == true
            }

            // bluetoothd asking about another device (a sensor nobody is pairing) is refused.
            let other = try await DBusConnection.connect(to: .address(fixture.daemon.address))
            defer { Task { await other.close() } }
            let ownName = await fixture.bus.uniqueName
            let refusal = await #expect(throws: DBusError.self) {
                try await other.call(
                    ownName, path: PairingAgent.path, interface: "org.bluez.Agent1", member: "RequestAuthorization",
                    arguments: [.objectPath(FakeBlueZ.devicePath(Self.strap.address))])
            }
            #expect(refusal?.name == "org.bluez.Error.Rejected")
        }
    }

    @Test func aNewBluetoothdIsAdoptedAndTheAgentRegisteredAgain() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            #expect(await fixture.fake.registeredAgents.values.contains("\(PairingAgent.path) NoInputNoOutput"))
            await fixture.fake.stop()
            try await fixture.events.wait("gone") { $0.contains(.stackUnavailable) }
            await #expect(throws: CentralError.self) { try await fixture.central.adapters() }
            let second = try await FakeBlueZ.start(on: .address(fixture.daemon.address), scenario: Self.scenario)
            do {
                try await fixture.events.wait("back") { $0.contains(.stackAvailable) }
                let deadline = ContinuousClock.now + .seconds(5)
                while await second.registeredAgents.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(await second.registeredAgents.values.contains("\(PairingAgent.path) NoInputNoOutput"))
                #expect(try await fixture.central.adapters().map(\.address) == [Self.adapter])
                try await fixture.central.connect(Self.strap, timeout: .seconds(5))
            } catch {
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }

    /// A stop right after a burst: every notification sent before StopNotify (or before the socket closed) is
    /// passed on before stopNotifications returns, in both modes (the gateway's stop relies on it to store them).
    @Test(arguments: [NotifyMode.properties, .acquired])
    func stoppingRightAfterABurstPassesOnEverythingSentBefore(mode: NotifyMode) async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            let central = fixture.central
            try await central.connect(Self.strap, timeout: .seconds(5))
            try await fixture.events.wait("resolved") { $0.contains(.servicesResolved(Self.strap, resolved: true)) }
            let hrm = try #require(
                try await central.characteristics(of: Self.strap).first { $0.uuid == .heartRateMeasurement })
            try await central.startNotifications(hrm, of: Self.strap, mode: mode)
            await fixture.fake.advance(by: .seconds(300))
            try await central.stopNotifications(hrm, of: Self.strap)
            let delivered = await fixture.fake.deliveredNotifications(of: Self.strap.address)
            #expect(delivered.count >= 250)
            #expect(await central.statistics().notifications == delivered.count)
        }
    }

    @Test func acquiredNotificationsComeThroughTheSocketAndAreAcquiredAgainAfterAReconnect() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            let central = fixture.central
            try await central.connect(Self.strap, timeout: .seconds(5))
            try await fixture.events.wait("resolved") { $0.contains(.servicesResolved(Self.strap, resolved: true)) }
            let hrm = try #require(
                try await central.characteristics(of: Self.strap).first { $0.uuid == .heartRateMeasurement })
            try await central.startNotifications(hrm, of: Self.strap, mode: .acquired)
            try await central.startNotifications(hrm, of: Self.strap, mode: .acquired)  // idempotent
            // While acquired, StartNotify from anyone is refused, as in BlueZ.
            let other = await #expect(throws: DBusError.self) {
                try await fixture.bus.call(
                    "org.bluez", path: hrm.handle, interface: "org.bluez.GattCharacteristic1", member: "StartNotify")
            }
            #expect(other?.message == "Notify acquired")
            await fixture.fake.advance(by: .seconds(5))
            // Every value the fake wrote to the socket by now arrives (waiting for a fixed count raced the last one).
            let delivered = await fixture.fake.deliveredNotifications(of: Self.strap.address)
            #expect(delivered.count >= 4)
            let first = try await fixture.events.wait("acquired values") {
                $0.notifications.count >= delivered.count
            }
            for notification in first.notifications {
                #expect(notification.characteristic == .heartRateMeasurement && notification.peripheral == Self.strap)
                _ = try HeartRateMeasurement(decoding: notification.value)
            }
            #expect(first.notifications.map(\.value) == delivered.map(\.value))

            // The link drops: the socket hangs up; after reconnecting the client acquires again.
            await fixture.fake.dropConnection(of: Self.strap.address)
            try await fixture.events.wait("disconnected") {
                $0.contains(.connectionChanged(Self.strap, connected: false))
            }
            fixture.events.clear()
            try await central.connect(Self.strap, timeout: .seconds(5))
            try await fixture.events.wait("resolved") { $0.contains(.servicesResolved(Self.strap, resolved: true)) }
            let again = try #require(
                try await central.characteristics(of: Self.strap).first { $0.uuid == .heartRateMeasurement })
            try await central.startNotifications(again, of: Self.strap, mode: .acquired)
            await fixture.fake.advance(by: .seconds(3))
            try await fixture.events.wait("values after reconnecting") { $0.notifications.count >= 2 }

            // Stopping closes the socket; bluetoothd notices on its next value.
            try await central.stopNotifications(again, of: Self.strap)
            await fixture.fake.advance(by: .seconds(2))
            try await fixture.events.wait("released") { _ in
                let value = try? await fixture.bus.getProperty(
                    "NotifyAcquired", interface: "org.bluez.GattCharacteristic1", path: again.handle,
                    destination: "org.bluez")
                return value == .boolean(false)
            }
        }
    }

    @Test func shutdownReleasesNotifySessionsAndDisconnectsManagedSensors() async throws {
        try await CentralFixture.run(Self.scenario) { fixture in
            try await fixture.central.connect(Self.strap, timeout: .seconds(5))
            try await fixture.events.wait("resolved") { $0.contains(.servicesResolved(Self.strap, resolved: true)) }
            let hrm = try #require(
                try await fixture.central.characteristics(of: Self.strap).first { $0.uuid == .heartRateMeasurement })
            try await fixture.central.startNotifications(hrm, of: Self.strap, mode: .properties)
            await fixture.central.shutdown(disconnecting: [Self.strap])
            #expect(await !fixture.fake.isConnected(Self.strap.address))
            #expect(await fixture.fake.registeredAgents.isEmpty)
        }
    }
}

extension [CentralEvent] {
    var discovered: Set<PeripheralID> {
        Set(compactMap { if case .discovered(let info) = $0 { info.id } else { nil } })
    }
}

/// A private bus, FakeBlueZ, and a started `BlueZCentral` on its own connection.
struct CentralFixture {
    let daemon: PrivateBus
    let fake: FakeBlueZ
    let bus: DBusConnection
    let central: BlueZCentral
    let agent: PairingAgent?
    let events: EventLog

    static func run(
        _ scenario: FakeBlueZScenario, agentCapability: String? = nil, _ body: (CentralFixture) async throws -> Void
    ) async throws {
        try await withFakeBlueZ(scenario) { daemon, fake, bus in
            let central = try await BlueZCentral.start(
                on: bus, agentCapability: agentCapability ?? "NoInputNoOutput")
            let events = EventLog.collecting(central.events())
            do {
                try await body(
                    CentralFixture(
                        daemon: daemon, fake: fake, bus: bus, central: central, agent: await central.agent,
                        events: events))
            } catch {
                await central.shutdown(disconnecting: [])
                throw error
            }
            await central.shutdown(disconnecting: [])
        }
    }
}
