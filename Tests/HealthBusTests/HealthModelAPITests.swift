import DBus
import Foundation
import Health
import HealthBus
import SQLiteStore
import Testing
import WearhouseClient

/// HealthKit's first app flow (issue 16) through `WearhouseClient` and the raw API: an app asks to read and write
/// its types, saves a height in metres and in inches, a weight, steps and distance over an interval, energy, a
/// heart rate and a night's sleep by stage name, reads them back with statistics, and reads the date of birth to
/// show an age; characteristics it was not granted look unset.
@Suite(.serialized) struct HealthModelAPITests {
    static let night: Int64 = 1_735_686_000_000  // 2024-12-31T23:00:00Z

    @Test func anAppSavesItsTypesReadsSleepStagesAndAnAge() async throws {
        try await withAPI { api in
            let client = try await api.client()
            defer { Task { await client.close() } }
            let app = try await api.identify(client)
            let types: [HealthType] = [
                .height, .bodyMass, .stepCount, .distanceWalkingRunning, .activeEnergyBurned, .heartRate,
                .sleepAnalysis,
            ]
            #expect(try await client.requestAuthorization(read: types + [.dateOfBirth], write: types).pending)
            try await api.store.setAuthorization(
                app: app,
                types.map { TypeAuthorization(type: $0.identifier, read: true, share: true) } + [
                    TypeAuthorization(type: "dateOfBirth", read: true, share: false)
                ])

            func at(_ minutes: Int64) -> Instant { Instant(milliseconds: Self.night + minutes * 60_000) }
            let me = Source(identifier: app)
            let saved = try await client.save([
                QuantitySample(type: .height, start: at(0), end: at(0), value: 1.80, source: me),
                QuantitySample(type: .bodyMass, start: at(0), end: at(0), value: 72.5, source: me),
                QuantitySample(type: .stepCount, start: at(0), end: at(10), value: 1_200, source: me),
                QuantitySample(type: .distanceWalkingRunning, start: at(0), end: at(10), value: 900, source: me),
                QuantitySample(type: .activeEnergyBurned, start: at(0), end: at(10), value: 55, source: me),
                QuantitySample(type: .heartRate, start: at(10), end: at(10), value: 72, source: me),
                QuantitySample(type: .sleepAnalysis, start: at(60), end: at(120), value: 3, source: me),
            ])
            #expect(saved == Array(repeating: .inserted, count: 7))

            // The raw API: a height in inches and sleep stages by name (categoryValue), no unit.
            func wire(
                _ type: String, _ from: Int64, _ to: Int64, _ value: Double, _ unit: String,
                _ properties: [(String, DBusValue)] = []
            ) -> DBusValue {
                .struct([
                    .string(type), .int64(at(from).milliseconds), .int64(at(to).milliseconds), .double(value),
                    .string(unit), .vardict(ordered: properties),
                ])
            }
            let raw = try await client.connection.call(
                client.destination, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName,
                member: "SaveSamples",
                arguments: [
                    .array(
                        HealthBusAPI.sampleType,
                        [
                            wire("height", 1_440, 1_440, 70, "in"),
                            wire("sleepAnalysis", 120, 210, 0, "", [("categoryValue", .string("asleepDeep"))]),
                            wire("sleepAnalysis", 210, 240, 5, ""),
                        ])
                ])
            #expect(raw.first?.stringArrayValue == ["inserted", "inserted", "inserted"])
            // A stage that does not exist, or a unit on a category, is refused naming type and value.
            let badName = await errorName {
                _ = try await client.connection.call(
                    client.destination, path: HealthBusAPI.objectPath, interface: HealthBusAPI.interfaceName,
                    member: "SaveSamples",
                    arguments: [
                        .array(
                            HealthBusAPI.sampleType,
                            [wire("sleepAnalysis", 300, 360, 0, "", [("categoryValue", .string("dozing"))])])
                    ])
            }
            #expect(
                badName?.contains("InvalidSample: sample 1: sleepAnalysis has no value 'dozing'; it takes inBed (0)")
                    == true)
            let badNumber = await errorName {
                _ = try await client.save([
                    QuantitySample(type: .sleepAnalysis, start: at(300), end: at(360), value: 7, source: me)
                ])
            }
            #expect(badNumber == HealthBusError.Name.invalidSample)

            func values(_ samples: [BusSample]) -> [Double] {
                samples.compactMap { sample in
                    if case .quantity(let quantity) = sample { return quantity.value }
                    return nil
                }
            }
            let heights = values(try await client.samples(SampleQuery(type: .height)).samples)
            #expect(heights == [1.80, 1.778])
            // Asked for in inches, the wire carries inches; the client gives them back in metres.
            let inInches = values(
                try await client.samples(SampleQuery(type: .height), unit: try HealthUnit("in")).samples)
            #expect(abs((inInches.last ?? 0) - 1.778) < 1e-12)
            let sleep = values(try await client.samples(SampleQuery(type: .sleepAnalysis)).samples)
            #expect(sleep == [3, 4, 5])

            // Hours in each stage that night.
            let stages = try await client.statistics(of: .sleepAnalysis, from: at(0), to: at(24 * 60))
            #expect(
                stages.categories == [
                    .init(value: 3, milliseconds: 3_600_000, count: 1),
                    .init(value: 4, milliseconds: 5_400_000, count: 1),
                    .init(value: 5, milliseconds: 1_800_000, count: 1),
                ])
            #expect(stages.count == 3)

            // The date of birth, and the age where the app is; a characteristic without a grant looks unset.
            #expect(try await client.dateOfBirth() == nil)
            try await api.store.setCharacteristic(
                .dateOfBirth, to: try Characteristics.Value(parsing: "1990-01-01", for: .dateOfBirth), of: nil,
                as: .owner)
            try await api.store.setCharacteristic(
                .bloodType, to: try Characteristics.Value(parsing: "O-", for: .bloodType), of: nil, as: .owner)
            #expect(try await client.dateOfBirth() == (try LocalDateTime(year: 1990, month: 1, day: 1)))
            #expect(try await client.bloodType() == .notSet)
            #expect(try await client.biologicalSex() == .notSet)
            // 2024-12-31T23:30Z: still 34 in New York, already 35 in Berlin.
            let newYearsEve = at(30)
            #expect(try await client.age(at: newYearsEve, timeZone: "America/New_York") == 34)
            #expect(try await client.age(at: newYearsEve, timeZone: "Europe/Berlin") == 35)
            let badZone = await errorName { _ = try await client.age(at: newYearsEve, timeZone: "Mars/Olympus") }
            #expect(badZone == HealthBusError.Name.invalidArgument)
            // Once granted, the blood type reads.
            try await api.store.setAuthorization(
                app: app, [TypeAuthorization(type: "bloodType", read: true, share: false)])
            #expect(try await client.bloodType() == .oNegative)
        }
    }
}
