import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import SQLiteStore
import Support
import Testing

/// Bike trainers, power meters, treadmills and rowers through the sample builder
/// (`SampleBuilder+FitnessMachines.swift`): samples in HealthKit's units, counters as deltas, a workout per session.
@Suite struct FitnessMachineSampleTests {
    static let machine = PeripheralID(adapter: "00:AA:01:00:00:01", address: "C0:FF:EE:00:00:61")
    static let source = Source(identifier: "wearhouse", version: "test")
    static let context = SensorContext(
        source: source,
        device: Device(name: "Machine", manufacturer: "ACME", serialNumber: "TM1", localIdentifier: machine.address),
        subject: "alice", timeZone: TimeZone(identifier: "UTC")!)
    /// 2026-11-29 10:00:00 UTC.
    static let wallStart: Int64 = 1_795_946_400_000_000
    static var startMilliseconds: Int64 { wallStart / 1000 }

    static func notification(_ uuid: BluetoothUUID, _ bytes: [UInt8], at seconds: Double) -> GATTNotification {
        GATTNotification(
            peripheral: machine, characteristic: uuid, value: bytes,
            receivedAt: Timestamp(
                monotonic: .milliseconds(Int64(seconds * 1000)) + .seconds(100),
                wallMicroseconds: wallStart + Int64(seconds * 1_000_000)))
    }

    static func instant(_ seconds: Double) -> Instant {
        Instant(milliseconds: startMilliseconds + Int64(seconds * 1000))
    }

    static func treadmill(speed: UInt16?, distance: UInt32, energy: UInt16, elapsed: UInt16, incline: Int16 = 20)
        -> [UInt8]
    {
        TreadmillData(
            instantaneousSpeed: speed, totalDistance: distance,
            incline: .init(inclination: incline, rampAngle: 0),
            common: FitnessMachineCommon(energy: FitnessMachineEnergy(total: energy), elapsedTime: elapsed)
        ).encoded()
    }

    static func status(_ code: FitnessMachineStatus.OpCode, _ parameter: [UInt8] = []) -> [UInt8] {
        FitnessMachineStatus(code, parameter: parameter).encoded()
    }

    static func sum(_ batch: SampleBatch, _ type: HealthType) -> Double {
        batch.samples.filter { $0.type == type }.reduce(0) { $0 + $1.value }
    }

    @Test func aTreadmillSessionWithAPauseIsOneWorkout() throws {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        let notes: [GATTNotification] = [
            Self.notification(.fitnessMachineStatus, Self.status(.startedOrResumedByUser), at: 0),
            Self.notification(.treadmillData, Self.treadmill(speed: 1000, distance: 0, energy: 0, elapsed: 0), at: 0.1),
            Self.notification(.treadmillData, Self.treadmill(speed: 1000, distance: 3, energy: 0, elapsed: 1), at: 1),
            Self.notification(.treadmillData, Self.treadmill(speed: 1000, distance: 6, energy: 1, elapsed: 2), at: 2),
            Self.notification(.fitnessMachineStatus, Self.status(.stoppedOrPausedByUser, [2]), at: 2.5),
            Self.notification(.fitnessMachineStatus, Self.status(.startedOrResumedByUser), at: 12.5),
            Self.notification(.treadmillData, Self.treadmill(speed: 1000, distance: 9, energy: 1, elapsed: 3), at: 13),
            Self.notification(
                .treadmillData, Self.treadmill(speed: 1000, distance: 12, energy: 2, elapsed: 4, incline: 40), at: 14),
            Self.notification(.fitnessMachineStatus, Self.status(.stoppedOrPausedByUser, [1]), at: 14.5),
            // After the stop: samples, but no session (the machine reports its sessions).
            Self.notification(.treadmillData, Self.treadmill(speed: nil, distance: 12, energy: 2, elapsed: 4), at: 20),
        ]
        for note in notes { builder.add(note, into: &batch) }
        builder.finish(into: &batch)
        #expect(batch.workouts.count == 1)
        let entry = try #require(batch.workouts.first)
        let workout = entry.workout
        #expect(workout.start == Self.instant(0))
        #expect(workout.end == Self.instant(14.5))
        #expect(workout.duration == 4.5)  // 14.5 s less the 10 s pause
        #expect(workout.totalDistance == 12)
        #expect(workout.totalEnergyBurned == 2)
        #expect(workout.activityType == .running)  // 12 m in 4.5 s: 2.7 m/s, 9.6 km/h
        #expect(workout.events.map(\.kind) == [.pause, .resume])
        #expect(workout.events.map(\.start) == [Self.instant(2.5), Self.instant(12.5)])
        #expect(workout.metadata["averageInclination"] == .quantity(2.4, unit: "%"))
        #expect(workout.metadata["maximumInclination"] == .quantity(4, unit: "%"))
        #expect(workout.metadata["machineElapsedTime"] == .quantity(4, unit: "s"))
        #expect(workout.subject == "alice")
        #expect(Self.sum(batch, .distanceWalkingRunning) == 12)
        #expect(Self.sum(batch, .activeEnergyBurned) == 2)
        let speeds = batch.samples.filter { $0.type == .runningSpeed }
        #expect(speeds.count == 5)
        #expect(speeds.allSatisfy { abs($0.value - 1000.0 / 360) < 1e-9 })
        // Every sample made while the session ran is the workout's.
        let ids = Set(
            batch.samples.filter { $0.end <= workout.end }.map {
                QuantitySample.derivedID(
                    type: $0.type.identifier, source: $0.source.identifier, device: $0.device?.key, start: $0.start,
                    end: $0.end)
            })
        #expect(Set(entry.sampleIDs) == ids)
    }

    @Test func theSinkSavesTheWorkoutAfterItsSamplesAndLeavesOutASampleTheStoreDoesNotHave() async throws {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        builder.add(Self.notification(.fitnessMachineStatus, Self.status(.startedOrResumedByUser), at: 0), into: &batch)
        for second in 0...5 {
            let data = Self.treadmill(speed: 500, distance: UInt32(second * 2), energy: UInt16(second), elapsed: 0)
            builder.add(Self.notification(.treadmillData, data, at: Double(second)), into: &batch)
        }
        builder.add(
            Self.notification(.fitnessMachineStatus, Self.status(.stoppedOrPausedByUser, [1]), at: 5), into: &batch)
        let expected = try #require(batch.workouts.first?.sampleIDs.count)
        batch.workouts[0].sampleIDs.insert(UUID(), at: 1)  // a sample the store never saw
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitness-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteHealthStore(path: directory.appendingPathComponent("health.db").path)
        let outcomes = try await HealthStoreSink(store: store).write(batch)
        #expect(outcomes.count == batch.count + 1)
        #expect(outcomes.last == .inserted)
        let workouts = try await store.workouts(SampleQuery(type: .workout), as: .owner).workouts
        #expect(workouts.count == 1)
        let members = try await store.workoutSampleIDs(try #require(workouts.first).id, as: .owner)
        #expect(members.values.reduce(0) { $0 + $1.count } == expected)
        #expect(workouts.first?.totalDistance == 10 && workouts.first?.totalEnergyBurned == 5)
    }

    @Test func aFastSessionIsARun() throws {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        builder.add(Self.notification(.fitnessMachineStatus, Self.status(.startedOrResumedByUser), at: 0), into: &batch)
        for second in 0...10 {
            let data = Self.treadmill(speed: 1100, distance: UInt32(second * 3), energy: 0, elapsed: UInt16(second))
            builder.add(Self.notification(.treadmillData, data, at: Double(second)), into: &batch)
        }
        builder.add(
            Self.notification(.fitnessMachineStatus, Self.status(.stoppedOrPausedByUser, [1]), at: 10), into: &batch)
        #expect(batch.workouts.map(\.workout.activityType) == [.running])
        #expect(batch.workouts.first?.workout.totalDistance == 30)
        #expect(batch.workouts.first?.workout.totalEnergyBurned == nil)
    }

    @Test func withoutStatusTheConnectionIsTheSession() throws {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        for second in 0...5 {
            let bike = IndoorBikeData(
                instantaneousSpeed: 3000, instantaneousCadence: 180, totalDistance: UInt32(100 + second * 8),
                instantaneousPower: 200,
                common: FitnessMachineCommon(energy: FitnessMachineEnergy(total: UInt16(10 + second))))
            builder.add(Self.notification(.indoorBikeData, bike.encoded(), at: Double(second)), into: &batch)
        }
        #expect(batch.workouts.isEmpty)
        builder.linkLost(into: &batch)
        let workout = try #require(batch.workouts.first?.workout)
        #expect(workout.activityType == .cycling)
        #expect(workout.start == Self.instant(0) && workout.end == Self.instant(5))
        #expect(workout.totalDistance == 40)  // the first value is a base
        #expect(workout.totalEnergyBurned == 5)
        #expect(Self.sum(batch, .distanceCycling) == 40)
        #expect(batch.samples.filter { $0.type == .cyclingPower }.map(\.value) == Array(repeating: 200, count: 6))
        #expect(batch.samples.filter { $0.type == .cyclingCadence }.map(\.value) == Array(repeating: 90, count: 6))
        #expect(batch.samples.filter { $0.type == .cyclingSpeed }.allSatisfy { abs($0.value - 3000.0 / 360) < 1e-9 })
        // The next connection is a new session, from the first data showing movement.
        var next = SampleBatch()
        let resting = IndoorBikeData(instantaneousSpeed: 0, instantaneousPower: 0).encoded()
        let riding = IndoorBikeData(instantaneousSpeed: 2000, instantaneousPower: 150).encoded()
        builder.add(Self.notification(.indoorBikeData, resting, at: 30), into: &next)
        builder.add(Self.notification(.indoorBikeData, riding, at: 31), into: &next)
        builder.add(Self.notification(.indoorBikeData, riding, at: 32), into: &next)
        builder.finish(into: &next)
        #expect(next.workouts.map(\.workout.start) == [Self.instant(31)])
        #expect(next.samples.filter { $0.type == .cyclingSpeed }.count == 2)  // none at rest outside a session
    }

    @Test func cyclingPowerGivesPowerCadenceDistanceAndEnergyAndHandlesRollover() throws {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        // Crank 0xffff at 0xfc00 then 1 at 0x0000 (2 revolutions in 1 s: 120/min); wheel 0xffffffff then 1
        // (2 revolutions of 2.105 m); energy 0xffff then 1 kJ (2 kJ).
        let first = CyclingPowerMeasurement(
            instantaneousPower: 180, wheel: .init(cumulativeRevolutions: 0xFFFF_FFFF, lastEventTime: 0xF800),
            crank: .init(cumulativeRevolutions: 0xFFFF, lastEventTime: 0xFC00), accumulatedEnergy: 0xFFFF)
        let second = CyclingPowerMeasurement(
            instantaneousPower: -3, wheel: .init(cumulativeRevolutions: 1, lastEventTime: 0x0000),
            crank: .init(cumulativeRevolutions: 1, lastEventTime: 0x0000), accumulatedEnergy: 1)
        builder.add(Self.notification(.cyclingPowerMeasurement, first.encoded(), at: 0), into: &batch)
        builder.add(Self.notification(.cyclingPowerMeasurement, second.encoded(), at: 1), into: &batch)
        #expect(batch.samples.filter { $0.type == .cyclingPower }.map(\.value) == [180])
        #expect(builder.counters.unusable == 1)  // -3 W
        #expect(batch.samples.filter { $0.type == .cyclingCadence }.map(\.value) == [120])
        #expect(abs(Self.sum(batch, .distanceCycling) - 2 * 2.105) < 1e-9)
        #expect(batch.samples.filter { $0.type == .cyclingSpeed }.map(\.value) == [2 * 2.105])
        #expect(abs(Self.sum(batch, .activeEnergyBurned) - 2 / 4.184) < 1e-9)
        #expect(builder.counters.counterResets == 0)
    }

    @Test func aMachineResetCountsFromZeroAndNotAvailableEnergyCountsNothing() {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        let values: [(UInt32, UInt16)] = [(500, 40), (510, 41), (4, 0xFFFF), (9, 2)]
        for (second, value) in values.enumerated() {
            let data = Self.treadmill(speed: 500, distance: value.0, energy: value.1, elapsed: 0)
            builder.add(Self.notification(.treadmillData, data, at: Double(second)), into: &batch)
        }
        #expect(batch.samples.filter { $0.type == .distanceWalkingRunning }.map(\.value) == [10, 4, 5])
        // 41 -> "not available" -> 2: a reset, 2 kcal since.
        #expect(batch.samples.filter { $0.type == .activeEnergyBurned }.map(\.value) == [1, 2])
        #expect(builder.counters.counterResets == 2)
    }

    @Test func aRowerSessionCountsItsDistanceInTheWorkout() throws {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        for second in 0...4 {
            let data = RowerData(
                strokes: .init(rate: 48, count: UInt16(second * 2)), totalDistance: UInt32(second * 4),
                common: FitnessMachineCommon(energy: FitnessMachineEnergy(total: UInt16(second))))
            builder.add(Self.notification(.rowerData, data.encoded(), at: Double(second)), into: &batch)
        }
        builder.finish(into: &batch)
        let workout = try #require(batch.workouts.first?.workout)
        #expect(workout.activityType == .rowing)
        #expect(workout.totalDistance == 16 && workout.totalEnergyBurned == 4)
    }

    @Test func malformedValuesAreCountedNotFatal() {
        var builder = SampleBuilder(context: Self.context)
        var batch = SampleBatch()
        builder.add(Self.notification(.treadmillData, h("05 00 d2"), at: 0), into: &batch)
        builder.add(Self.notification(.fitnessMachineStatus, h("02"), at: 1), into: &batch)
        builder.add(Self.notification(.cyclingPowerMeasurement, h("00"), at: 2), into: &batch)
        #expect(builder.counters.malformed == 3)
        #expect(batch.isEmpty)
    }
}

/// Bytes from hex, for these tests.
private func h(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var digits = text.filter { $0 != " " }[...]
    while digits.count >= 2 {
        bytes.append(UInt8(digits.prefix(2), radix: 16) ?? 0)
        digits = digits.dropFirst(2)
    }
    return bytes
}
