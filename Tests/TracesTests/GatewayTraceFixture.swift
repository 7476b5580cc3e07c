import FakeDevices
import Foundation
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import Traces

/// The whole gateway as `GatewayServiceTests` runs it (`GatewayFixture`: a private bus, FakeBlueZ, the BlueZ
/// client, the service, SQLite), with a ``TraceRecorder`` as the service's observer, a
/// 20 s heartbeat series window and Paris time.
enum GatewayTraceFixture {
    static let source = Source(identifier: "wearhouse", version: "test")

    static func run(
        _ scenario: FakeBlueZScenario, enrol: [(String, String)], _ body: (GatewayFixture) async throws -> Void
    ) async throws {
        let samples = SampleBuilder.Settings(seriesWindow: .seconds(20))
        let options = GatewayFixture.Options(
            samples: samples, timeZone: TimeZone(identifier: "Europe/Paris")!,
            observer: { directory, clock in
                try TraceRecorder(
                    path: directory.appendingPathComponent("run.trace").path, recorder: "wearhouse test",
                    samples: samples, clock: clock)
            })
        try await GatewayFixture.run(scenario, enrol: enrol, options: options, body)
    }
}

extension GatewayFixture {
    var tracePath: String { directory.appendingPathComponent("run.trace").path }
    var recorder: TraceRecorder { observer as! TraceRecorder }  // made by GatewayTraceFixture.run
}

/// Everything a store holds, for comparing two stores.
struct StoreContents: Equatable {
    var quantities: [QuantitySample]
    var series: [HeartbeatSeriesSample]

    static func of(_ store: SQLiteHealthStore) async throws -> StoreContents {
        var quantities: [QuantitySample] = []
        for type in HealthTypeCatalog.all where type != .heartbeatSeries {
            var cursor: SampleCursor?
            repeat {
                let page = try await store.samples(SampleQuery(type: type, limit: 1000, cursor: cursor), as: .owner)
                quantities += page.samples
                cursor = page.next
            } while cursor != nil
        }
        let series = try await store.heartbeatSeries(SampleQuery(type: .heartbeatSeries), as: .owner).series
        return StoreContents(
            quantities: quantities.sorted { $0.id.uuidString < $1.id.uuidString },
            series: series.sorted { $0.id.uuidString < $1.id.uuidString })
    }
}
