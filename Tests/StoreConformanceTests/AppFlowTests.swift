import DBus
import Foundation
import Health
import HealthBus
import Support
import TestSupport
import Testing
import WearhouseClient

/// Issue 16's first app flow through `WearhouseClient` against a HealthBus server, on each engine: the app asks
/// for its types, saves a height in metres and one in inches (converted with `HealthUnit`), a weight, steps and
/// distance over an interval, active energy, a heart rate and a night's sleep, reads the hours per stage, and the
/// date of birth to show an age.
@Suite struct AppFlowTests {
    static let night: Int64 = 1_735_686_000_000  // 2024-12-31T23:00:00Z

    @Test(arguments: Engine.allCases) func anAppSavesReadsAndShowsAnAge(_ engine: Engine) async throws {
        let (store, storage) = try makeStore(engine)
        defer { storage.remove() }
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        var settings = HealthBusServer.Settings()
        settings.identify = { _, uid, _ in AppIdentity(uid: uid, unit: "com.example.health") }
        let serverConnection = try await DBusConnection.connect(to: .address(bus.address))
        let server = try await HealthBusServer.start(
            on: serverConnection, store: try storage.reopen(), settings: settings, log: .disabled)
        let client = try await HealthClient.connect(to: .address(bus.address), timeout: .seconds(20))
        do {
            let app = try await client.identity().app
            let types: [HealthType] = [
                .height, .bodyMass, .stepCount, .distanceWalkingRunning, .activeEnergyBurned, .heartRate,
                .sleepAnalysis,
            ]
            #expect(try await client.requestAuthorization(read: types + [.dateOfBirth], write: types).pending)
            try await store.setAuthorization(
                app: app,
                types.map { TypeAuthorization(type: $0.identifier, read: true, share: true) } + [
                    TypeAuthorization(type: "dateOfBirth", read: true, share: false)
                ])
            func at(_ minutes: Int64) -> Instant { Instant(milliseconds: Self.night + minutes * 60_000) }
            let me = Source(identifier: app)
            let inches = try HealthUnit("in").convert(70, to: HealthUnit("m"))
            let saved = try await client.save([
                QuantitySample(type: .height, start: at(0), end: at(0), value: 1.80, source: me),
                QuantitySample(type: .height, start: at(1_440), end: at(1_440), value: inches, source: me),
                QuantitySample(type: .bodyMass, start: at(0), end: at(0), value: 72.5, source: me),
                QuantitySample(type: .stepCount, start: at(0), end: at(10), value: 1_200, source: me),
                QuantitySample(type: .distanceWalkingRunning, start: at(0), end: at(10), value: 900, source: me),
                QuantitySample(type: .activeEnergyBurned, start: at(0), end: at(10), value: 55, source: me),
                QuantitySample(type: .heartRate, start: at(10), end: at(10), value: 72, source: me),
                QuantitySample(type: .sleepAnalysis, start: at(60), end: at(180), value: 3, source: me),
                QuantitySample(type: .sleepAnalysis, start: at(180), end: at(240), value: 4, source: me),
            ])
            #expect(saved == Array(repeating: .inserted, count: 9))
            let heights = try await client.samples(SampleQuery(type: .height)).samples.compactMap { sample in
                if case .quantity(let quantity) = sample { return quantity.value }
                return nil
            }
            #expect(heights == [1.80, 1.778])
            let steps = try await client.statistics(of: .stepCount, from: at(0), to: at(60))
            #expect(steps.sum == 1_200)
            let stages = try await client.statistics(of: .sleepAnalysis, from: at(0), to: at(24 * 60))
            #expect(
                stages.categories == [
                    .init(value: 3, milliseconds: 7_200_000, count: 1),
                    .init(value: 4, milliseconds: 3_600_000, count: 1),
                ])
            #expect(try await client.dateOfBirth() == nil)
            try await store.setCharacteristic(
                .dateOfBirth, to: try Characteristics.Value(parsing: "1990-01-01", for: .dateOfBirth), of: nil,
                as: .owner)
            #expect(try await client.dateOfBirth() == (try LocalDateTime(year: 1990, month: 1, day: 1)))
            #expect(try await client.age(at: at(30), timeZone: "America/New_York") == 34)
            #expect(try await client.age(at: at(30), timeZone: "Europe/Berlin") == 35)
        } catch {
            await client.close()
            await server.stop()
            await serverConnection.close()
            throw error
        }
        await client.close()
        await server.stop()
        await serverConnection.close()
    }
}
