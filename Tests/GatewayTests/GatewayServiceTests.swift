import BlueZ
import DBus
import FakeDevices
import Foundation
import GATT
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import Support
import Synchronization
import TestSupport
import Testing

/// The whole gateway: BlueZCentral over a private dbus-daemon, FakeBlueZ, the service, a real SQLite store.
@Suite(.serialized, .timeLimit(.minutes(2))) struct GatewayServiceTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let pod = "C0:FF:EE:00:00:02"
    static let wrist = "C0:FF:EE:00:00:03"
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: strap, seed: 7, known: true),
        .init(kind: .footpod, address: pod, seed: 3, known: true),
        .init(kind: .wristMonitor, address: wrist, seed: 5, known: true),
    ])

    @Test func samplesFromTwoPeopleAreStoredWithTheirDeviceLocationAndSubject() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice"), (Self.pod, "bob")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap, Self.pod])
            try await fixture.run(seconds: 40)
            await fixture.stop()

            let truth = try #require(await fixture.fake.groundTruth(of: Self.strap))
            let rates = try await fixture.quantities(.heartRate)
            // Everything sent after the subscription (the simulation ran a second before it) is stored, in order.
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
            #expect(rates.map { UInt16($0.value) } == Array(truth.heartRates.filter { $0 > 0 }.suffix(rates.count)))
            let first = try #require(rates.first)
            #expect(first.subject == "alice")
            #expect(first.device?.localIdentifier == Self.strap)
            #expect(first.device?.manufacturer != nil)
            #expect(first.device?.serialNumber != nil)
            #expect(first.metadata[MetadataKey.heartRateSensorLocation] == .number(1))
            #expect(first.source.identifier == "wearhouse")
            let series = try await fixture.series()
            #expect(series.flatMap(\.beats).count == truth.rrIntervals.count)
            #expect(series.allSatisfy { $0.subject == "alice" })

            let podTruth = try #require(await fixture.fake.groundTruth(of: Self.pod))
            let measurements = try podTruth.emissions.filter { $0.characteristic == .rscMeasurement }
                .map { try RSCMeasurement(decoding: $0.value) }.suffix(fixture.delivered(.rscMeasurement))
            let expected =
                Double((measurements.last?.totalDistance ?? 0) - (measurements.first?.totalDistance ?? 0)) / 10
            let distance = try await fixture.quantities(.distanceWalkingRunning)
            #expect(abs(distance.reduce(0) { $0 + $1.value } - expected) < 0.001)
            #expect(distance.allSatisfy { $0.subject == "bob" && $0.device?.localIdentifier == Self.pod })
            let speeds = try await fixture.quantities(.runningSpeed)
            #expect(speeds.count == measurements.count)

            let statuses = try await fixture.store.sensorStatuses()
            #expect(Set(statuses.map(\.address)) == [Self.strap, Self.pod])
            let everyOneDelivered = statuses.allSatisfy { status in status.notifications > 0 && status.samples > 0 }
            #expect(everyOneDelivered)
            #expect(await fixture.fake.isConnected(Self.strap) == false)  // released at stop (docs/bluez.md, R13)
        }
    }

    @Test func linkLossAbortedConnectsAndSilenceAreRecoveredWithoutDuplicates() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            // The link drops and the next connect aborts once.
            await fixture.fake.setConnectFault(.abortByLocal, for: Self.strap)
            await fixture.fake.dropConnection(of: Self.strap)
            try await fixture.waitUntil("the aborted connect") {
                try await fixture.status(Self.strap)?.state == "backoff (last error: transient)"
            }
            await fixture.fake.setConnectFault(nil, for: Self.strap)
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            // Out of range: the watchdog (2 s here) notices the silence; back in range, it streams again.
            await fixture.fake.setNearby(false, for: Self.strap)
            try await fixture.waitUntil("watchdog") {
                try await fixture.status(Self.strap)?.reconnects ?? 0 >= 2
            }
            await fixture.fake.setNearby(true, for: Self.strap)
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            await fixture.stop()

            let rates = try await fixture.quantities(.heartRate)
            #expect(Set(rates.map(\.id)).count == rates.count)
            let counters = await fixture.writer.counters
            #expect(counters.duplicates == 0 && counters.rejected == 0 && counters.conflicts == 0)
            // Every value the sensor sent while subscribed is stored once.
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
        }
    }

    @Test func bluetoothdRestartingAndTheAdapterReturningAreRecovered() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 3)
            await fixture.fake.removeAdapter()
            try await fixture.waitUntil("waiting") {
                try await fixture.status(Self.strap)?.state.hasPrefix("waiting") == true
            }
            await fixture.fake.addAdapter()
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 3)

            try await fixture.restartBluetoothd()
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 3)
            await fixture.stop()
            let rates = try await fixture.quantities(.heartRate)
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
        }
    }

    @Test func aSensorEnrolledForAcquireNotifyStreamsThroughItsSocketAcrossReconnects() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: []) { fixture in
            try await fixture.store.register(
                RegisteredSensor(address: Self.strap, subject: "alice", notifyMode: .acquired, enrolledAt: Instant.now))
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            await fixture.fake.dropConnection(of: Self.strap)
            try await fixture.waitUntil("reconnected") { try await fixture.status(Self.strap)?.reconnects ?? 0 >= 1 }
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 5)
            await fixture.stop()
            let rates = try await fixture.quantities(.heartRate)
            #expect(rates.count >= 8)
            #expect(rates.count == fixture.delivered(.heartRateMeasurement))
            // Nothing came as PropertiesChanged: the Value property stays empty while acquired.
            let delivered = await fixture.fake.deliveredNotifications(of: Self.strap).count
            #expect(delivered == rates.count)
        }
    }

    @Test func aSensorEnrolledWhileRunningIsPickedUpAndAForgottenOneReleased() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.strap, "alice")]) { fixture in
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.store.register(
                RegisteredSensor(address: Self.wrist, subject: "carol", location: "wrist", enrolledAt: Instant.now))
            try await fixture.waitUntilStreaming([Self.wrist])
            _ = try await fixture.store.forgetSensor(Self.strap)
            try await fixture.waitUntil("released") { await !fixture.fake.isConnected(Self.strap) }
            try await fixture.run(seconds: 3)
            await fixture.stop()
            let wrist = try await fixture.quantities(.heartRate).filter { $0.device?.localIdentifier == Self.wrist }
            #expect(!wrist.isEmpty)
            #expect(
                wrist.allSatisfy {
                    $0.subject == "carol" && $0.metadata[MetadataKey.heartRateSensorLocation] == .number(2)
                })
        }
    }
}
