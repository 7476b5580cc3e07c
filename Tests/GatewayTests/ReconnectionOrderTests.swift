import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Support
import Synchronization
import Testing

/// The order of a session's reads and `StartNotify`: the sensor's metadata are read first at its first connection,
/// and after them on a reconnection. A bonded sensor notifies as soon as the link is back; in the BlueZ VM
/// (docs/bluez-vm.md) bluetoothd dropped 2 heart rates that came while the gateway was still reading Device
/// Information after a reconnection, before its `StartNotify`.
@Suite(.timeLimit(.minutes(1))) struct ReconnectionOrderTests {
    static let hci0 = AdapterInfo(
        address: "00:AA:01:00:00:00", name: "hci0", powered: true, discovering: false, supportsCentral: true)
    static let strap = "C0:FF:EE:00:00:01"

    /// The fake stack, with the reads and subscriptions the gateway asked for written down in order.
    final class OrderedCentral: Central {
        let fake: FakeCentral
        let calls = Mutex<[String]>([])
        init(_ fake: FakeCentral) { self.fake = fake }

        func note(_ call: String) { calls.withLock { $0.append(call) } }
        func events() -> AsyncStream<CentralEvent> { fake.events() }
        func adapters() async throws(CentralError) -> [AdapterInfo] { try await fake.adapters() }
        func knownPeripherals() async throws(CentralError) -> [PeripheralInfo] { try await fake.knownPeripherals() }
        func startDiscovery(services: [BluetoothUUID], on adapter: AdapterAddress?) async throws(CentralError) {
            try await fake.startDiscovery(services: services, on: adapter)
        }
        func stopDiscovery(on adapter: AdapterAddress?) async throws(CentralError) {
            try await fake.stopDiscovery(on: adapter)
        }
        func connect(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError) {
            note("connect")
            try await fake.connect(peripheral, timeout: timeout)
        }
        func disconnect(_ peripheral: PeripheralID) async throws(CentralError) { try await fake.disconnect(peripheral) }
        func pair(_ peripheral: PeripheralID, timeout: Duration) async throws(CentralError) {
            try await fake.pair(peripheral, timeout: timeout)
        }
        func setTrusted(_ peripheral: PeripheralID, _ trusted: Bool) async throws(CentralError) {
            try await fake.setTrusted(peripheral, trusted)
        }
        func remove(_ peripheral: PeripheralID) async throws(CentralError) { try await fake.remove(peripheral) }
        func characteristics(of peripheral: PeripheralID) async throws(CentralError) -> [CharacteristicInfo] {
            try await fake.characteristics(of: peripheral)
        }
        func read(_ characteristic: CharacteristicInfo, of peripheral: PeripheralID) async throws(CentralError)
            -> [UInt8]
        {
            note("read")
            return try await fake.read(characteristic, of: peripheral)
        }
        func write(
            _ value: [UInt8], to characteristic: CharacteristicInfo, of peripheral: PeripheralID, withResponse: Bool
        ) async throws(CentralError) {
            try await fake.write(value, to: characteristic, of: peripheral, withResponse: withResponse)
        }
        func startNotifications(
            _ characteristic: CharacteristicInfo, of peripheral: PeripheralID, mode: NotifyMode
        ) async throws(CentralError) {
            note("startNotify")
            try await fake.startNotifications(characteristic, of: peripheral, mode: mode)
        }
        func stopNotifications(_ characteristic: CharacteristicInfo, of peripheral: PeripheralID)
            async throws(CentralError)
        {
            try await fake.stopNotifications(characteristic, of: peripheral)
        }
        func statistics() async -> CentralStatistics { await fake.statistics() }
    }

    @Test func aReconnectionStartsNotificationsBeforeItReadsTheSensorAgain() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reconnection-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock(wallMicroseconds: 1_795_946_400_000_000)
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let fake = FakeCentral(adapters: [Self.hci0])
        let strap = fake.add(PeripheralScript(kind: .chestStrap, address: Self.strap, seed: 5), on: Self.hci0.address)
        try await fake.startDiscovery(services: [], on: Self.hci0.address)
        try await fake.stopDiscovery(on: Self.hci0.address)
        try await store.register(RegisteredSensor(address: Self.strap, subject: "alice", enrolledAt: .now))
        let central = OrderedCentral(fake)
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
            fake.advance(by: .seconds(3))
            await service.settled()
            fake.dropConnection(strap)
            #expect(await streaming(false))
            #expect(await streaming(true))
            fake.advance(by: .seconds(3))
            await service.settled()
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
        // Each connection's calls, from its connect on.
        let calls = central.calls.withLock { $0 }
        let sessions = calls.split(separator: "connect", omittingEmptySubsequences: true).map(Array.init)
        try #require(sessions.count == 2, "\(calls)")
        func position(_ call: String, in session: [String]) -> Int { session.firstIndex(of: call) ?? Int.max }
        // First: the metadata reads, then StartNotify. Again: StartNotify, then the reads.
        #expect(position("read", in: sessions[0]) < position("startNotify", in: sessions[0]))
        #expect(position("startNotify", in: sessions[1]) < position("read", in: sessions[1]))
        #expect(sessions[1].contains("read"))
        // The samples of both connections carry the strap's serial number.
        let rates = try await store.samples(SampleQuery(type: .heartRate, limit: 1000), as: .owner).samples
        #expect(!rates.isEmpty)
        #expect(rates.allSatisfy { $0.device?.serialNumber != nil })
    }
}
