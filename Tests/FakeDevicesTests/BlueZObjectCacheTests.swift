import BlueZ
import DBus
import FakeDevices
import Foundation
import GATT
import Synchronization
import TestSupport
import Testing

/// BlueZObjectCache against FakeBlueZ on a private dbus-daemon.
@Suite(.serialized) struct BlueZObjectCacheTests {
    static let adapter = "00:AA:01:00:00:01"
    static let strapAddress = "C0:FF:EE:00:00:01"
    static let strapPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
    static let strapID = PeripheralID(adapter: adapter, address: strapAddress)
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: strapAddress, seed: 7, known: true),
        .init(kind: .footpod, address: "C0:FF:EE:00:00:02", seed: 3),
    ])

    @Test func startListsTheAdapterByAddressAndTheKnownDevices() async throws {
        try await CacheFixture.run(Self.scenario) { fixture in
            let adapters = await fixture.cache.adapters
            #expect(
                adapters == [
                    AdapterInfo(
                        address: Self.adapter, name: "hci0", powered: true, discovering: false, supportsCentral: true)
                ])
            let peripherals = await fixture.cache.peripherals
            #expect(peripherals.map(\.id) == [Self.strapID])
            #expect(peripherals.first?.name != nil)
            #expect(peripherals.first?.connected == false)
            #expect(peripherals.first?.services.contains(.heartRateService) == true)
            #expect(await fixture.cache.devicePath(of: Self.strapID) == Self.strapPath)
            #expect(await fixture.cache.isAvailable)
        }
    }

    @Test func connectGivesConnectionThenResolutionAndTheCharacteristics() async throws {
        try await CacheFixture.run(Self.scenario) { fixture in
            try await fixture.call(Self.strapPath, "org.bluez.Device1", "Connect")
            let events = try await fixture.events.wait("servicesResolved") {
                $0.contains(.servicesResolved(Self.strapID, resolved: true))
            }
            let connected = try #require(events.firstIndex(of: .connectionChanged(Self.strapID, connected: true)))
            let resolved = try #require(events.firstIndex(of: .servicesResolved(Self.strapID, resolved: true)))
            #expect(connected < resolved)
            // Signals are applied in order: the GATT objects are there once ServicesResolved=true is.
            let characteristics = await fixture.cache.characteristics(of: Self.strapID)
            let hrm = try #require(characteristics.first { $0.uuid == .heartRateMeasurement })
            #expect(hrm.service == .heartRateService)
            #expect(hrm.properties.contains(.notify))
            #expect(hrm.handle.hasPrefix(Self.strapPath + "/service"))
            #expect(hrm.handle.range(of: #"/char[0-9a-f]{4}$"#, options: .regularExpression) != nil)
            let peripheral = await fixture.cache.peripherals.first
            #expect(peripheral?.connected == true && peripheral?.servicesResolved == true)
        }
    }

    @Test func notificationsCarryTheCharacteristicUUIDAndDecodeAsHeartRate() async throws {
        try await CacheFixture.run(Self.scenario) { fixture in
            try await fixture.call(Self.strapPath, "org.bluez.Device1", "Connect")
            let hrm = try await fixture.characteristic(.heartRateMeasurement)
            try await fixture.events.wait("resolved") { $0.contains(.servicesResolved(Self.strapID, resolved: true)) }
            try await fixture.call(hrm.handle, "org.bluez.GattCharacteristic1", "StartNotify")
            await fixture.fake.advance(by: .seconds(10))
            let events = try await fixture.events.wait("notifications") { $0.notifications.count >= 5 }
            let notifications = events.notifications
            #expect(notifications.allSatisfy { $0.peripheral == Self.strapID })
            #expect(notifications.allSatisfy { $0.characteristic == .heartRateMeasurement })
            let rates = try notifications.map { try HeartRateMeasurement(decoding: $0.value).heartRate }
            #expect(rates.allSatisfy { (30...230).contains(Int($0)) })
            #expect(notifications.first?.receivedAt.wallMicroseconds ?? 0 > 1_600_000_000_000_000)
        }
    }

    @Test func removingTheAdapterDropsItsDevicesAndAddingBringsThemBack() async throws {
        try await CacheFixture.run(Self.scenario) { fixture in
            await fixture.fake.removeAdapter()
            let removed = try await fixture.events.wait("adapterRemoved") { $0.contains(.adapterRemoved(Self.adapter)) }
            #expect(removed.contains(.peripheralRemoved(Self.strapID)))
            #expect(await fixture.cache.adapters.isEmpty)
            #expect(await fixture.cache.peripherals.isEmpty)
            #expect(await fixture.cache.devicePath(of: Self.strapID) == nil)

            fixture.events.clear()
            await fixture.fake.addAdapter()
            let added = try await fixture.events.wait("device back") {
                $0.contains { if case .discovered(let info) = $0 { info.id == Self.strapID } else { false } }
            }
            #expect(
                added.contains { if case .adapterAdded(let info) = $0 { info.address == Self.adapter } else { false } })
            #expect(await fixture.cache.adapters.map(\.address) == [Self.adapter])
            #expect(await fixture.cache.peripherals.map(\.id) == [Self.strapID])
        }
    }

    @Test func theStackGoingAwayEmptiesTheCacheAndANewOwnerRebuildsIt() async throws {
        try await CacheFixture.run(Self.scenario) { fixture in
            await fixture.fake.stop()
            try await fixture.events.wait("stackUnavailable") { $0.contains(.stackUnavailable) }
            #expect(await fixture.cache.adapters.isEmpty)
            #expect(await fixture.cache.peripherals.isEmpty)
            #expect(await !fixture.cache.isAvailable)

            let second = try await FakeBlueZ.start(on: .address(fixture.daemon.address), scenario: Self.scenario)
            do {
                try await fixture.events.wait("stackAvailable") { $0.contains(.stackAvailable) }
            } catch {
                await second.stop()
                throw error
            }
            let unavailable = try #require(fixture.events.all.firstIndex(of: .stackUnavailable))
            let available = try #require(fixture.events.all.firstIndex(of: .stackAvailable))
            #expect(unavailable < available)
            #expect(await fixture.cache.adapters.map(\.address) == [Self.adapter])
            #expect(await fixture.cache.peripherals.map(\.id) == [Self.strapID])
            #expect(await fixture.cache.owner == (await second.uniqueName))
            await second.stop()
        }
    }
}

extension BlueZObjectCacheTests {
    /// python-dbusmock sends integers of other widths and `aay` where BlueZ sends `ay` (`docs/bluez.md`,
    /// "python-dbusmock's bluez5 template").
    @Test func propertiesWithDbusmockTypesAreRead() async throws {
        try await CacheFixture.run(Self.scenario) { fixture in
            let path = "/org/bluez/hci0/dev_11_22_33_44_55_66"
            let device: DBusValue = .vardict([
                "Address": .string("11:22:33:44:55:66"), "Adapter": .objectPath("/org/bluez/hci0"),
                "RSSI": .int32(-70), "Connected": .byte(0), "Paired": .boolean(true),
                "UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb"]),
            ])
            try await fixture.bus.emitSignal(
                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                arguments: [
                    .objectPath(path),
                    .dictionary(
                        key: .string, value: .dictionary(key: .string, value: .variant),
                        [DBusDictEntry(key: .string("org.bluez.Device1"), value: device)]),
                ])
            let id = PeripheralID(adapter: Self.adapter, address: "11:22:33:44:55:66")
            let events = try await fixture.events.wait("discovered") {
                $0.contains { if case .discovered(let info) = $0 { info.id == id } else { false } }
            }
            let info = events.compactMap { if case .discovered(let info) = $0 { info } else { nil } }.first
            #expect(info?.rssi == -70)
            #expect(info?.paired == true && info?.connected == false)
            try await fixture.bus.emitPropertiesChanged(
                path: path, interface: "org.bluez.Device1", changed: [("Connected", .uint32(1))])
            try await fixture.events.wait("connected") { $0.contains(.connectionChanged(id, connected: true)) }
        }
    }
}

/// Every event a cache reports, in order.
final class EventLog: Sendable {
    private let events = Mutex<[CentralEvent]>([])

    static func collecting(_ stream: AsyncStream<CentralEvent>) -> EventLog {
        let log = EventLog()
        Task {
            for await event in stream { log.events.withLock { $0.append(event) } }
        }
        return log
    }

    var all: [CentralEvent] { events.withLock { $0 } }

    func clear() { events.withLock { $0.removeAll() } }

    /// Waits (up to 5 s) until `done` holds for the events so far; returns them.
    @discardableResult
    func wait(_ what: String, until done: ([CentralEvent]) async throws -> Bool) async throws -> [CentralEvent] {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let current = all
            if try await done(current) { return current }
            guard ContinuousClock.now < deadline else {
                throw FakeBlueZError(message: "timed out waiting for \(what); got \(current)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension [CentralEvent] {
    var notifications: [GATTNotification] {
        compactMap { if case .notification(let notification) = $0 { notification } else { nil } }
    }
}

/// A private bus, FakeBlueZ, and a started cache on its own connection.
struct CacheFixture {
    let daemon: PrivateBus
    let fake: FakeBlueZ
    let bus: DBusConnection
    let cache: BlueZObjectCache
    let events: EventLog

    static func run(_ scenario: FakeBlueZScenario, _ body: (CacheFixture) async throws -> Void) async throws {
        try await withFakeBlueZ(scenario) { daemon, fake, bus in
            let cache = BlueZObjectCache(bus: bus)
            let events = EventLog.collecting(await cache.events())
            do {
                try await cache.start()
                try await body(CacheFixture(daemon: daemon, fake: fake, bus: bus, cache: cache, events: events))
            } catch {
                await cache.stop()
                throw error
            }
            await cache.stop()
        }
    }

    @discardableResult
    func call(_ path: String, _ interface: String, _ member: String) async throws -> [DBusValue] {
        try await bus.call("org.bluez", path: path, interface: interface, member: member)
    }

    /// The strap's characteristic `uuid` once the cache has it (GATT objects arrive around ServicesResolved).
    func characteristic(_ uuid: BluetoothUUID) async throws -> CharacteristicInfo {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let found = await cache.characteristics(of: BlueZObjectCacheTests.strapID).first { $0.uuid == uuid }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw FakeBlueZError(message: "no characteristic \(uuid) in the cache")
    }
}
