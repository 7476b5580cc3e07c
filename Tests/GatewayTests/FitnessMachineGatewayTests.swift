import FakeDevices
import Foundation
import GATT
import Gateway
import GatewayTestSupport
import Health
import SQLiteStore
import Testing

/// A bike trainer and a treadmill through the whole gateway: FakeBlueZ on a private bus, BlueZCentral, the service
/// and a real SQLite store. What is stored equals what the fakes sent (distances and energies to the counters'
/// resolution: whole metres and kcal for FTMS), with one workout per treadmill session carrying that session's
/// totals and samples, and one cycling workout for the trainer's connection.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FitnessMachineGatewayTests {
    static let trainer = "C0:FF:EE:00:00:71"
    static let treadmill = "C0:FF:EE:00:00:72"
    static let scenario = FakeBlueZScenario(peripherals: [
        .init(kind: .bikeTrainer, address: trainer, seed: 5, known: true),
        .init(kind: .treadmill, address: treadmill, seed: 6, known: true),
    ])

    /// The sum of a cumulative counter's increases as the gateway counts them: the first value is a base, a
    /// smaller value is a reset after which the value itself is the increase.
    static func increases(_ totals: [UInt32]) -> UInt32 {
        zip(totals, totals.dropFirst()).reduce(0) { sum, pair in sum + (pair.1 >= pair.0 ? pair.1 - pair.0 : pair.1) }
    }

    @Test func whatIsStoredIsWhatTheMachinesSentWithAWorkoutPerSession() async throws {
        try await GatewayFixture.run(Self.scenario, enrol: [(Self.trainer, "alice"), (Self.treadmill, "bob")]) {
            fixture in
            try await fixture.waitUntilStreaming([Self.trainer, Self.treadmill])
            try await fixture.run(seconds: 240)
            await fixture.stop()
            let workouts = try await fixture.store.workouts(SampleQuery(type: .workout), as: .owner).workouts

            // The treadmill: distance and energy deltas add up to what it sent.
            let treadmillSent = try await fixture.fake.deliveredNotifications(of: Self.treadmill)
                .filter { $0.characteristic == .treadmillData }.map { try TreadmillData(decoding: $0.value) }
            #expect(treadmillSent.count >= 230)
            let distances = try await fixture.quantities(.distanceWalkingRunning)
            let sentDistance = Self.increases(treadmillSent.compactMap(\.totalDistance))
            #expect(sentDistance > 100)
            #expect(distances.reduce(0) { $0 + $1.value } == Double(sentDistance))
            let energies = try await fixture.quantities(.activeEnergyBurned)
            let treadmillEnergy = energies.filter { $0.device?.localIdentifier == Self.treadmill }
            let sentEnergy = Self.increases(treadmillSent.compactMap { $0.common.energy.map { UInt32($0.total) } })
            #expect(treadmillEnergy.reduce(0) { $0 + $1.value } == Double(sentEnergy))
            #expect(distances.allSatisfy { $0.subject == "bob" && $0.device?.localIdentifier == Self.treadmill })

            // One workout per session it reported (and one for the session still open when the service stopped).
            let truth = try #require(await fixture.fake.groundTruth(of: Self.treadmill))
            let finished = truth.machineSessions.filter { $0.end != nil }
            #expect(finished.count >= 1)
            let open = truth.machineSessions.count > finished.count ? 1 : 0
            let onTreadmill = workouts.filter { $0.device?.localIdentifier == Self.treadmill }.sorted {
                $0.start < $1.start
            }
            #expect(onTreadmill.count == finished.count + open)
            for (workout, session) in zip(onTreadmill, finished) {
                let active = try #require(session.activeSeconds)
                #expect(workout.totalDistance == Double(session.distanceMeters))
                #expect(workout.totalEnergyBurned == Double(session.energyKilocalories))
                #expect(abs(workout.duration - active) < 0.05, "\(workout.duration) s stored, \(active) s run")
                let pace = Double(session.distanceMeters) / workout.duration
                #expect(workout.activityType == (pace >= SampleBuilder.runningSpeedThreshold ? .running : .walking))
                #expect(workout.events.map(\.kind) == [.pause, .resume])
                #expect(workout.subject == "bob")
                #expect(workout.metadata["averageInclination"] != nil)
                // Its samples were added to it: its distance samples add up to its total distance.
                let members = try await fixture.store.workoutSampleIDs(workout.id, as: .owner)
                let distanceIDs = Set(members[HealthType.distanceWalkingRunning.identifier] ?? [])
                let memberDistance = distances.filter { distanceIDs.contains($0.id) }.reduce(0) { $0 + $1.value }
                #expect(memberDistance == Double(session.distanceMeters))
                #expect(!(members[HealthType.runningSpeed.identifier] ?? []).isEmpty)
            }

            // The trainer: Indoor Bike Data gives distance and energy, Cycling Power gives power.
            let trainerSent = await fixture.fake.deliveredNotifications(of: Self.trainer)
            let bike = try trainerSent.filter { $0.characteristic == .indoorBikeData }.map {
                try IndoorBikeData(decoding: $0.value)
            }
            let power = try trainerSent.filter { $0.characteristic == .cyclingPowerMeasurement }.map {
                try CyclingPowerMeasurement(decoding: $0.value)
            }
            #expect(bike.count >= 230 && power.count == bike.count)
            let cycled = try await fixture.quantities(.distanceCycling)
            #expect(cycled.reduce(0) { $0 + $1.value } == Double(Self.increases(bike.compactMap(\.totalDistance))))
            let trainerEnergy = energies.filter { $0.device?.localIdentifier == Self.trainer }
            let sentTrainerEnergy = Self.increases(bike.compactMap { $0.common.energy.map { UInt32($0.total) } })
            #expect(trainerEnergy.reduce(0) { $0 + $1.value } == Double(sentTrainerEnergy))
            let watts = try await fixture.quantities(.cyclingPower).sorted { $0.start < $1.start }
            #expect(watts.map(\.value) == power.map { Double($0.instantaneousPower) })
            let cadences = try await fixture.quantities(.cyclingCadence)
            #expect(cadences.count >= power.count / 2)  // none in a second without a whole crank revolution
            #expect(cadences.allSatisfy { (30...160).contains($0.value) })
            let speeds = try await fixture.quantities(.cyclingSpeed)
            #expect(speeds.count == bike.count)
            // Its connection was its session: one cycling workout with its totals.
            let rides = workouts.filter { $0.device?.localIdentifier == Self.trainer }
            #expect(rides.count == 1)
            let ride = try #require(rides.first)
            #expect(ride.activityType == .cycling)
            #expect(ride.totalDistance == cycled.reduce(0) { $0 + $1.value })
            #expect(ride.totalEnergyBurned == Double(sentTrainerEnergy))
            #expect(ride.subject == "alice")
            let rideMembers = try await fixture.store.workoutSampleIDs(ride.id, as: .owner)
            #expect(rideMembers[HealthType.cyclingPower.identifier]?.count == watts.count)
        }
    }
}
