import FakeDevices
import Foundation
import GATT
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import TestSupport
import Testing
import Traces

/// A trace recorded from the live service over FakeBlueZ, replayed into an empty store, gives exactly what the live
/// service stored.
@Suite(.serialized) struct RoundTripTests {
    static let strap = "C0:FF:EE:00:00:01"
    static let pod = "C0:FF:EE:00:00:02"
    static let steps = "C0:FF:EE:00:00:03"
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .chestStrap, address: strap, seed: 7, known: true),
        .init(kind: .footpod, address: pod, seed: 3, known: true),
        .init(kind: .stepCounter, address: steps, seed: 5, known: true),
    ])

    @Test func replayingTheRecordedTraceStoresExactlyWhatTheLiveServiceStored() async throws {
        try await GatewayTraceFixture.run(
            Self.scenario, enrol: [(Self.strap, "alice"), (Self.pod, "bob"), (Self.steps, "bob")]
        ) { fixture in
            try await fixture.waitUntilStreaming([Self.strap, Self.pod, Self.steps])
            try await fixture.run(seconds: 30)
            // The strap's link drops: the live service breaks the RR chain; the trace has the disconnection.
            await fixture.fake.dropConnection(of: Self.strap)
            try await fixture.waitUntil("strap reconnected") {
                (await fixture.service.statuses()).first { $0.address == Self.strap }?.reconnects ?? 0 >= 1
            }
            try await fixture.waitUntilStreaming([Self.strap])
            try await fixture.run(seconds: 30)
            await fixture.stop()
            try fixture.recorder.close()

            let live = try await StoreContents.of(fixture.store)
            #expect(live.quantities.count > 100)
            #expect(live.series.count >= 2)
            let types = Set(live.quantities.map(\.type))
            #expect(types.isSuperset(of: [.heartRate, .runningSpeed, .distanceWalkingRunning, .stepCount]))

            let replayStore = try SQLiteHealthStore(path: fixture.directory.appendingPathComponent("replay.db").path)
            let first = try await Self.replay(fixture.tracePath, into: replayStore)
            let replayed = try await StoreContents.of(replayStore)
            #expect(replayed.quantities.count == live.quantities.count)
            #expect(replayed.series.count == live.series.count)
            #expect(replayed.quantities == live.quantities)
            #expect(replayed.series == live.series)
            #expect(first.inserted == live.quantities.count + live.series.count)

            // Twice: nothing new.
            let second = try await Self.replay(fixture.tracePath, into: replayStore)
            #expect(second.inserted == 0)
            #expect(second.duplicates == first.inserted)
            #expect(try await StoreContents.of(replayStore) == replayed)
        }
    }

    /// Devices that indicate: a glucose meter answering its RACP and a shared scale. The trace records their
    /// results and the RACP's responses as indications, and replays to what the live service stored.
    @Test func indicatingDevicesAreRecordedAsIndicationsAndReplayToTheSameStore() async throws {
        let meter = "C0:FF:EE:00:00:61"
        let scale = "C0:FF:EE:00:00:51"
        let scenario = FakeBlueZScenario(peripherals: [
            .init(
                kind: .glucoseMeter, address: meter, seed: 5, known: true, paired: true, summaryInterval: 0.01,
                measurementCount: 40),
            .init(
                kind: .bathroomScale, address: scale, seed: 9, known: true, summaryInterval: 10,
                clockStart: PeripheralScript.simulationEpoch - 3600),
        ])
        try await GatewayTraceFixture.run(scenario, enrol: [(meter, "dana"), (scale, "1=alice,2=bob")]) { fixture in
            try await fixture.waitUntilStreaming([meter, scale])
            try await fixture.waitUntil("the meter's transfer") {
                await fixture.advance(by: .milliseconds(100))
                let glucose = try #require(await fixture.fake.peripheral(at: meter) as? GlucoseMeter)
                return glucose.transfers.first?.response == .success
            }
            try await fixture.run(seconds: 25)
            await fixture.stop()
            try fixture.recorder.close()

            // Kinds counted per characteristic (no closures inside the macros: see HealthDeviceGatewayTests).
            var kinds: [BluetoothUUID: [TraceValue.Kind: Int]] = [:]
            for record in try TraceReader(path: fixture.tracePath).readAll() {
                guard case .value(let value) = record else { continue }
                kinds[value.characteristic, default: [:]][value.kind, default: 0] += 1
            }
            #expect(kinds[.recordAccessControlPoint]?.keys.sorted(by: { $0.rawValue < $1.rawValue }) == [.indication])
            #expect(kinds[.weightMeasurement]?.keys.sorted(by: { $0.rawValue < $1.rawValue }) == [.indication])
            #expect(kinds[.glucoseMeasurement]?[.notification] ?? 0 >= 40)
            #expect(kinds[.glucoseMeasurement]?.count == 1)
            // The scale's clock is an hour slow (two in the fixture's Paris time, as its UTC wall time is read
            // there): the trace keeps the correction, and the replay makes it too.
            var corrected = 0
            for sample in try await StoreContents.of(fixture.store).quantities
            where sample.metadata[MetadataKey.deviceClockOffset] == .quantity(-7200, unit: "s") {
                corrected += 1
            }
            #expect(corrected >= 1)

            let live = try await StoreContents.of(fixture.store)
            #expect(live.quantities.filter { $0.type == .bloodGlucose }.count >= 40)
            #expect(live.quantities.contains { $0.type == .bodyMass })
            let replayStore = try SQLiteHealthStore(path: fixture.directory.appendingPathComponent("replay.db").path)
            _ = try await Self.replay(fixture.tracePath, into: replayStore)
            #expect(try await StoreContents.of(replayStore).quantities == live.quantities)
        }
    }

    static func replay(_ path: String, into store: SQLiteHealthStore) async throws -> StoreWriter.Counters {
        let writer = StoreWriter(sink: HealthStoreSink(store: store))
        var reader = try TraceReader(path: path)
        let engine = TraceReplayEngine(settings: .init(source: Source(identifier: "wearhouse", version: "replay")))
        let counters = try await writer.whileRunning {
            try await TraceReplay.run(&reader, engine: engine, writer: writer)
        }
        #expect(reader.issues.isEmpty)
        #expect(counters.notifications > 0)
        return await writer.counters
    }
}
