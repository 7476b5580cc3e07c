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
