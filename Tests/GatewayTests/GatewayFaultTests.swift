import BlueZ
import DBus
import FakeDevices
import Foundation
import GATT
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import TestSupport
import Testing

/// Each fault FakeBlueZ can inject, against the whole gateway: recovered, with no duplicate and no silent loss.
/// R-numbers are the requirements of `docs/bluez.md`.
@Suite(.serialized, .timeLimit(.minutes(2))) struct GatewayFaultTests {
    static let strap = "C0:FF:EE:00:00:11"

    static func scenario(_ faults: FakeBlueZScenario.Faults? = nil) -> FakeBlueZScenario {
        FakeBlueZScenario(peripherals: [.init(kind: .chestStrap, address: strap, seed: 21, faults: faults, known: true)]
        )
    }

    /// Stored heart-rate samples, after the service stopped.
    static func check(_ fixture: GatewayFixture, malformed: Int = 0, repeats: Int = 0) async throws {
        await fixture.stop()
        let rates = try await fixture.quantities(.heartRate)
        #expect(Set(rates.map(\.id)).count == rates.count)
        let counters = await fixture.writer.counters
        #expect(counters.rejected == 0 && counters.conflicts == 0)
        // Every notification received is either stored, or counted: malformed, or the same value at the same
        // instant (a repeat the store recognises as a duplicate).
        #expect(rates.count + malformed + repeats == fixture.delivered(.heartRateMeasurement))
        let status = try await fixture.store.sensorStatuses().first { $0.address == strap }
        #expect(status?.malformed == Int64(malformed))
    }

    @Test func aConnectThatNeverAnswersTimesOutIsCancelledAndRetried() async throws {
        try await GatewayFixture.run(Self.scenario(), enrol: [(Self.strap, "alice")], start: false) { fixture in
            await fixture.fake.setConnectFault(.noReply, for: Self.strap)
            await fixture.start()
            // The first Connect hangs; the service gives up after its timeout (2 s here) and cancels it, and the
            // next attempt meets "Operation already in progress" only if the cancel did not happen.
            try await fixture.waitUntil("timeout") {
                try await fixture.status(Self.strap)?.state.contains("timeout") == true
            }
            #expect(await !fixture.fake.isConnecting(Self.strap))
            await fixture.fake.setConnectFault(nil, for: Self.strap)
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            try await Self.check(fixture)
        }
    }

    @Test func aConnectLeftPendingByAnotherClientIsCancelledThenRetried() async throws {
        try await GatewayFixture.run(Self.scenario(), enrol: [(Self.strap, "alice")], start: false) { fixture in
            // Another program's Connect hangs in bluetoothd: ours gets "Operation already in progress" (R8 in
            // progress), disconnects once to cancel it, and retries patiently.
            await fixture.fake.setConnectFault(.noReply, for: Self.strap)
            let other = try await DBusConnection.connect(to: .address(fixture.daemon.address))
            let stale = Task {
                try? await other.call(
                    "org.bluez", path: FakeBlueZ.devicePath(Self.strap), interface: "org.bluez.Device1",
                    member: "Connect", timeout: .seconds(30))
            }
            try await fixture.waitUntil("pending") { await fixture.fake.isConnecting(Self.strap) }
            await fixture.start()
            try await fixture.waitUntil("in progress") {
                try await fixture.status(Self.strap)?.state.contains("inProgress") == true
            }
            await fixture.fake.setConnectFault(nil, for: Self.strap)
            try await fixture.waitUntilStreaming([Self.strap])
            #expect(await !fixture.fake.isConnecting(Self.strap))
            try await fixture.run(seconds: 5)
            stale.cancel()
            await other.close()
            try await Self.check(fixture)
        }
    }

    /// The adapter is unplugged and plugged in again before the service listens: the central passes those events
    /// on to its other listeners only. Settling must not wait for the service to handle them (it waited forever,
    /// holding a CI run until its limit, when the central's forwarding ran before the service subscribed).
    @Test func eventsPassedOnBeforeTheServiceListensAreNotWaitedFor() async throws {
        try await GatewayFixture.run(Self.scenario(), enrol: [(Self.strap, "alice")], start: false) { fixture in
            await fixture.fake.removeAdapter()
            await fixture.fake.addAdapter()
            #expect(await fixture.passedOnEvents() >= 2)
            await fixture.start()
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 3)
            try await Self.check(fixture)
        }
    }

    @Test func malformedAndRepeatedNotificationsAreCountedNotStoredTwice() async throws {
        let faults = FakeBlueZScenario.Faults(malformedEvery: 5, duplicateEvery: 7)
        try await GatewayFixture.run(Self.scenario(faults), enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 40)
            let delivered = await fixture.fake.deliveredNotifications(of: Self.strap)
                .filter { $0.characteristic == .heartRateMeasurement }
            let malformed = delivered.filter { (try? HeartRateMeasurement(decoding: $0.value)) == nil }.count
            // A repeated value arrives at the same (simulated) instant: the store takes it as a duplicate.
            let repeats = zip(delivered, delivered.dropFirst()).filter {
                $0.0 == $0.1 && (try? HeartRateMeasurement(decoding: $0.1.value)) != nil
            }.count
            #expect(malformed > 0 && repeats > 0)
            try await Self.check(fixture, malformed: malformed, repeats: repeats)
            #expect(await fixture.writer.counters.duplicates >= repeats)  // energy values repeat with them
        }
    }

    @Test func aFirmwareUpdateThatMovesEveryHandleIsFollowed() async throws {
        let faults = FakeBlueZScenario.Faults(firmwareUpdateAfterSeconds: 8)
        try await GatewayFixture.run(Self.scenario(faults), enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 10)
            // The sensor restarts with its new firmware: the link drops, the layout it comes back with differs.
            await fixture.fake.dropConnection(of: Self.strap)
            try await fixture.waitUntil("reconnected") {
                try await fixture.status(Self.strap)?.reconnects ?? 0 >= 1
            }
            try await fixture.waitUntilStreaming([Self.strap])
            let before = fixture.delivered(.heartRateMeasurement)
            try await fixture.run(seconds: 5)
            #expect(fixture.delivered(.heartRateMeasurement) > before)
            let device = try await fixture.quantities(.heartRate).last?.device
            #expect(device?.firmwareVersion != nil)
            try await Self.check(fixture)
        }
    }

    @Test func bluetoothdRestartingDropsEverythingAndTheServiceBuildsItAgain() async throws {
        try await GatewayFixture.run(Self.scenario(), enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            try await fixture.fake.restart()
            try await fixture.waitUntil("reconnected") { try await fixture.status(Self.strap)?.reconnects ?? 0 >= 1 }
            try await fixture.waitUntilStreaming([Self.strap])
            // The pairing agent was registered again with the new bluetoothd (R2).
            #expect(await fixture.fake.registeredAgents.values.contains("\(PairingAgent.path) NoInputNoOutput"))
            let before = fixture.delivered(.heartRateMeasurement)
            try await fixture.run(seconds: 5)
            #expect(fixture.delivered(.heartRateMeasurement) > before)
            try await Self.check(fixture)
        }
    }

    @Test func aSensorThatGoesSilentIsReconnectedByTheWatchdog() async throws {
        let faults = FakeBlueZScenario.Faults(silentAfterSeconds: 6)
        try await GatewayFixture.run(Self.scenario(faults), enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 8)
            try await fixture.waitUntil("watchdog") { try await fixture.status(Self.strap)?.reconnects ?? 0 >= 1 }
            try await Self.check(fixture)
        }
    }
}
