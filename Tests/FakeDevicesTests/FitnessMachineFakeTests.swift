import FakeDevices
import GATT
import Testing

/// The bike trainer and the treadmill: what they send decodes, adds up to their ground truth, and follows the
/// session protocol (`docs/gatt-fitness-machines.md`).
@Suite struct FitnessMachineFakeTests {
    static let trainer = PeripheralScript(kind: .bikeTrainer, address: "B1:CE:00:00:00:01", seed: 21)
    static let treadmill = PeripheralScript(kind: .treadmill, address: "7D:ED:00:00:00:01", seed: 22)

    @Test func theTrainerSendsIndoorBikeDataThenCyclingPowerEverySecond() throws {
        var trainer = BikeTrainer(script: Self.trainer)
        _ = trainer.advance(to: .seconds(600))
        let truth = trainer.groundTruth
        let bike = try truth.emissions.filter { $0.characteristic == .indoorBikeData }.map {
            try IndoorBikeData(decoding: $0.value)
        }
        let power = try truth.emissions.filter { $0.characteristic == .cyclingPowerMeasurement }.map {
            try CyclingPowerMeasurement(decoding: $0.value)
        }
        #expect(bike.count == 600 && power.count == 600)
        // Indoor Bike Data first, then Cycling Power, at each tick.
        let data = truth.emissions.filter { $0.characteristic != .batteryLevel }
        for pair in stride(from: 0, to: data.count, by: 2) {
            #expect(data[pair].characteristic == .indoorBikeData)
            #expect(data[pair + 1].characteristic == .cyclingPowerMeasurement)
            #expect(data[pair].at == data[pair + 1].at)
        }
        for (record, measurement) in zip(bike, power) {
            #expect(record.instantaneousPower == measurement.instantaneousPower)
            #expect((60...450).contains(Int(measurement.instantaneousPower)))
            #expect(measurement.crank != nil && measurement.wheel == nil)
        }
        // The total distance is the integrated speed, to the metre.
        let lastDistance = try #require(bike.last?.totalDistance)
        #expect(abs(Double(lastDistance) - truth.distanceMeters) < 1)
        // Distances and energies never go back; cadence from the crank data matches the sent cadence.
        for (earlier, later) in zip(bike, bike.dropFirst()) {
            #expect(try #require(later.totalDistance) >= #require(earlier.totalDistance))
            #expect(try #require(later.common.energy?.total) >= #require(earlier.common.energy?.total))
        }
        let revolutions = zip(power, power.dropFirst()).reduce(0) { sum, pair in
            sum + Int(pair.1.crank!.cumulativeRevolutions &- pair.0.crank!.cumulativeRevolutions)
        }
        let cadences = bike.compactMap(\.cadencePerMinute)
        let expected = cadences.dropLast().reduce(0, +) / 60
        #expect(abs(Double(revolutions) - expected) < 2 + expected * 0.01)
        #expect(try CyclingPowerFeature(decoding: trainer.read(.cyclingPowerFeature)) == BikeTrainer.powerFeatures)
        #expect(
            try FitnessMachineFeature(decoding: trainer.read(.fitnessMachineFeature)) == BikeTrainer.machineFeatures)
        #expect(throws: ATTError.readNotPermitted) { try trainer.read(.indoorBikeData) }
    }

    @Test func theTreadmillRunsSessionsWithAPauseAndReportsThem() throws {
        var treadmill = Treadmill(script: Self.treadmill)
        _ = treadmill.advance(to: .seconds(900))
        let truth = treadmill.groundTruth
        #expect(truth.machineSessions.count >= 4)
        let statuses = try truth.emissions.filter { $0.characteristic == .fitnessMachineStatus }.map {
            try FitnessMachineStatus(decoding: $0.value)
        }
        // started, paused, resumed, stopped for each finished session.
        let events = statuses.compactMap(\.sessionEvent)
        let finished = truth.machineSessions.filter { $0.end != nil }
        #expect(
            Array(events.prefix(finished.count * 4))
                == Array(
                    repeatElement(
                        [.started, .paused, .started, .stopped] as [FitnessMachineStatus.SessionEvent],
                        count: finished.count
                    )
                    .joined()))
        // Each session's data counts from zero and ends at the totals the ground truth records.
        var index = 0
        let emissions = truth.emissions
        for session in finished {
            let end = try #require(session.end)
            let sent = try emissions.filter {
                $0.characteristic == .treadmillData && $0.at >= session.start && $0.at <= end
            }
            .map { try TreadmillData(decoding: $0.value) }
            #expect(sent.first?.totalDistance == 0)
            #expect(sent.first?.common.energy?.total == 0)
            #expect(sent.last?.totalDistance == session.distanceMeters)
            #expect(sent.last?.common.energy?.total == session.energyKilocalories)
            #expect(session.distanceMeters > 30)
            let active = try #require(session.activeSeconds)
            #expect(active >= 60 && active <= 120)
            // While paused the belt stands: speed 0, the distance where it was.
            let pausedAt = try #require(session.pausedAt)
            let resumedAt = try #require(session.resumedAt)
            let paused = try emissions.filter {
                $0.characteristic == .treadmillData && $0.at > pausedAt && $0.at < resumedAt
            }.map { try TreadmillData(decoding: $0.value) }
            #expect(!paused.isEmpty)
            #expect(paused.allSatisfy { $0.instantaneousSpeed == 0 })
            #expect(Set(paused.compactMap(\.totalDistance)).count == 1)
            index += 1
        }
        #expect(index == finished.count)
        #expect(try FitnessMachineFeature(decoding: treadmill.read(.fitnessMachineFeature)) == Treadmill.features)
    }

    @Test(arguments: [PeripheralScript.Kind.bikeTrainer, .treadmill])
    func scenariosKnowTheKinds(_ kind: PeripheralScript.Kind) throws {
        let scenarioKind = try #require(FakeBlueZScenario.Kind.allCases.first { $0.scriptKind == kind })
        let peripheral = PeripheralScript(kind: scenarioKind.scriptKind, address: "00:00:00:00:00:01").makePeripheral()
        #expect(!peripheral.services.isEmpty)
        #expect(PeripheralScript.Kind(rawValue: kind.rawValue) == kind)
    }
}
