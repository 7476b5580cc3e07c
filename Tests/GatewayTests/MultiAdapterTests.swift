import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Support
import Testing

/// A gateway with an adapter per sensor (as in the BlueZ VM, docs/bluez-vm.md), on the in-process fake stack.
@Suite(.timeLimit(.minutes(1))) struct MultiAdapterTests {
    static let hci0 = AdapterInfo(
        address: "00:AA:01:00:00:00", name: "hci0", powered: true, discovering: false, supportsCentral: true)
    static let hci2 = AdapterInfo(
        address: "00:AA:01:02:00:02", name: "hci2", powered: true, discovering: false, supportsCentral: true)
    static let strap = "C0:FF:EE:00:00:01"

    /// A sensor enrolled on the second adapter whose device object goes (RemoveDevice, or bluetoothd dropping it)
    /// is looked for by discovery on that adapter, not on the default one, and streams again. In the VM it was
    /// looked for on hci0 only, and never came back.
    @Test func aSensorIsLookedForOnItsOwnAdapter() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("multi-adapter-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock(wallMicroseconds: 1_795_946_400_000_000)
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let central = FakeCentral(adapters: [Self.hci0, Self.hci2])
        let strap = central.add(
            PeripheralScript(kind: .chestStrap, address: Self.strap, seed: 3), on: Self.hci2.address)
        // Enrolled through hci2: bluetoothd knows the strap there.
        try await central.startDiscovery(services: [], on: Self.hci2.address)
        try await central.stopDiscovery(on: Self.hci2.address)
        try await store.register(
            RegisteredSensor(address: Self.strap, adapter: Self.hci2.address, subject: "alice", enrolledAt: .now))
        let service = GatewayService(
            central: central, registry: store, writer: StoreWriter(sink: HealthStoreSink(store: store), clock: clock),
            settings: .init(source: Source(identifier: "wearhouse", version: "test")),
            log: ServiceLog(level: .warning, destination: .standardError), clock: clock)
        /// Moves the clock half a second at a time until the strap is (or is no longer) streaming.
        func streaming(_ wanted: Bool) async -> Bool {
            for _ in 0..<40 {
                if (await service.statuses().first?.state == "streaming") == wanted { return true }
                clock.advance(by: .milliseconds(500))
                await service.settled()
            }
            return false
        }
        let (started, running) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingDiscardingTaskGroup { group throws in
            group.addTask { try await service.run { running.finish() } }
            for await _ in started {}
            #expect(await streaming(true))
            try await central.remove(strap)
            #expect(try await central.knownPeripherals().isEmpty)
            #expect(await streaming(false))
            #expect(await streaming(true))
            #expect(try await central.knownPeripherals().map(\.id) == [strap])
            // The stop's waits run on the manual clock: it is moved to each deadline meanwhile.
            await withDiscardingTaskGroup { stopping in
                stopping.addTask {
                    while !Task.isCancelled {
                        await clock.waitForSleepers(1)
                        guard !Task.isCancelled else { return }
                        clock.advanceToNextDeadline()
                    }
                }
                await service.stop()
                stopping.cancelAll()
            }
        }
    }
    /// bluetoothd can hold a device object with the sensor's address on another adapter too (the default one's
    /// discovery saw it advertise, or it connected there once). The service reaches the sensor through the adapter
    /// it was enrolled with, at start and after bluetoothd restarted: in the VM it took the default adapter's
    /// object after a restart, and that link could not work.
    @Test func aSensorIsReachedThroughItsOwnAdapterWhenAnotherKnowsItsAddress() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("multi-adapter-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock(wallMicroseconds: 1_795_946_400_000_000)
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let central = FakeCentral(adapters: [Self.hci0, Self.hci2])
        let own = central.add(PeripheralScript(kind: .chestStrap, address: Self.strap, seed: 3), on: Self.hci2.address)
        let other = central.add(
            PeripheralScript(kind: .chestStrap, address: Self.strap, seed: 4), on: Self.hci0.address)
        // Both adapters know the address, bonded (so that the objects outlive bluetoothd's restart).
        for (id, adapter) in [(own, Self.hci2.address), (other, Self.hci0.address)] {
            try await central.startDiscovery(services: [], on: adapter)
            try await central.stopDiscovery(on: adapter)
            try await central.pair(id, timeout: .seconds(5))
            try await central.disconnect(id)
        }
        try await store.register(
            RegisteredSensor(address: Self.strap, adapter: Self.hci2.address, subject: "alice", enrolledAt: .now))
        let service = GatewayService(
            central: central, registry: store, writer: StoreWriter(sink: HealthStoreSink(store: store), clock: clock),
            settings: .init(source: Source(identifier: "wearhouse", version: "test")),
            log: ServiceLog(level: .warning, destination: .standardError), clock: clock)
        func streaming(_ wanted: Bool) async -> Bool {
            for _ in 0..<40 {
                if (await service.statuses().first?.state == "streaming") == wanted { return true }
                clock.advance(by: .milliseconds(500))
                await service.settled()
            }
            return false
        }
        let (started, running) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingDiscardingTaskGroup { group throws in
            group.addTask { try await service.run { running.finish() } }
            for await _ in started {}
            #expect(await streaming(true))
            central.advance(by: .seconds(3))
            await service.settled()
            #expect(!central.deliveredNotifications(of: own).isEmpty)
            #expect(central.deliveredNotifications(of: other).isEmpty)
            central.stopStack()
            #expect(await streaming(false))
            central.startStack()
            let before = central.deliveredNotifications(of: own).count
            #expect(await streaming(true))
            central.advance(by: .seconds(3))
            await service.settled()
            #expect(central.deliveredNotifications(of: own).count > before)
            #expect(central.deliveredNotifications(of: other).isEmpty)
            await withDiscardingTaskGroup { stopping in
                stopping.addTask {
                    while !Task.isCancelled {
                        await clock.waitForSleepers(1)
                        guard !Task.isCancelled else { return }
                        clock.advanceToNextDeadline()
                    }
                }
                await service.stop()
                stopping.cancelAll()
            }
        }
    }
}
