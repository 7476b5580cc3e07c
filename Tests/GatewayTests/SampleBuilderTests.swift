import FakeDevices
import Foundation
import GATT
import Gateway
import Health
import Support
import TestSupport
import Testing

/// The sample builder on hand-made notifications and on the simulated sensors' own output.
struct SampleBuilderTests {
    static let strap = PeripheralID(adapter: "00:AA:01:00:00:01", address: "C0:FF:EE:00:00:01")
    static let context = SensorContext(
        source: Source(identifier: "wearhouse", version: "test"),
        device: Device(
            name: "Strap", manufacturer: "Polar", model: "H10", serialNumber: "SN1", localIdentifier: strap.address),
        subject: "alice", bodySensorLocation: 1, timeZone: TimeZone(identifier: "Europe/Berlin")!)
    /// 2026-11-29 10:00:00 UTC.
    static let wallStart: Int64 = 1_795_946_400_000_000

    static func notification(_ uuid: BluetoothUUID, _ bytes: [UInt8], at seconds: Double) -> GATTNotification {
        let monotonic = Duration.milliseconds(Int64(seconds * 1000))
        return GATTNotification(
            peripheral: strap, characteristic: uuid, value: bytes,
            receivedAt: Timestamp(
                monotonic: monotonic + .seconds(100), wallMicroseconds: wallStart + Int64(seconds * 1_000_000)))
    }

    static func hrm(_ rate: UInt16, rr: [UInt16] = [], energy: UInt16? = nil, contact: UInt8 = 0) -> [UInt8] {
        HeartRateMeasurement(
            heartRate: rate, sensorContact: .init(bits: contact), energyExpended: energy, rrIntervals: RRIntervals(rr)
        ).encoded()
    }

    @Test func heartRateSamplesAreTaggedAndZeroOrOutOfContactValuesAreLeftOut() {
        var builder = SampleBuilder(context: Self.context)
        var samples: [QuantitySample] = []
        samples += builder.add(Self.notification(.heartRateMeasurement, Self.hrm(72), at: 0)).samples
        samples += builder.add(Self.notification(.heartRateMeasurement, Self.hrm(0), at: 1)).samples
        samples += builder.add(Self.notification(.heartRateMeasurement, Self.hrm(75, contact: 0b10), at: 2)).samples
        samples += builder.add(Self.notification(.heartRateMeasurement, Self.hrm(76, contact: 0b11), at: 3)).samples
        samples += builder.add(Self.notification(.heartRateMeasurement, [0x10], at: 4)).samples  // truncated
        #expect(samples.map(\.value) == [72, 76])
        #expect(samples.map(\.type) == [.heartRate, .heartRate])
        let first = samples[0]
        #expect(first.start == Instant(milliseconds: Self.wallStart / 1000))
        #expect(first.start == first.end)
        #expect(first.startOffsetSeconds == 3600)
        #expect(first.source.identifier == "wearhouse")
        #expect(first.device?.localIdentifier == Self.strap.address)
        #expect(first.device?.serialNumber == "SN1")
        #expect(first.subject == "alice")
        #expect(first.metadata[MetadataKey.heartRateSensorLocation] == .number(1))
        #expect(samples[1].start == Instant(milliseconds: Self.wallStart / 1000 + 3000))
        #expect(builder.counters.zeroHeartRate == 1)
        #expect(builder.counters.outOfContact == 1)
        #expect(builder.counters.malformed == 1)
        #expect(builder.lastError?.kind == "truncated")
    }

    @Test func theUTCOffsetFollowsDaylightSavingTimeAcrossATransition() {
        // Europe/Berlin springs forward at 2026-03-29 01:00 UTC (+01:00 -> +02:00).
        let transition: Int64 = 1_774_746_000_000_000
        var builder = SampleBuilder(context: Self.context)
        var offsets: [Int32] = []
        for (index, second) in [-2, -1, 0, 1, 2].enumerated() {
            let at = transition + Int64(second) * 1_000_000
            let notification = GATTNotification(
                peripheral: Self.strap, characteristic: .heartRateMeasurement, value: Self.hrm(70),
                receivedAt: Timestamp(monotonic: .seconds(100 + index), wallMicroseconds: at))
            offsets += builder.add(notification).samples.map(\.startOffsetSeconds)
        }
        #expect(offsets == [3600, 3600, 7200, 7200, 7200])
    }

    @Test func timestampsFollowTheMonotonicClockWhenTheWallClockSteps() {
        var builder = SampleBuilder(context: Self.context)
        _ = builder.add(Self.notification(.heartRateMeasurement, Self.hrm(70), at: 0))
        var stepped = Self.notification(.heartRateMeasurement, Self.hrm(71), at: 1)
        stepped.receivedAt.wallMicroseconds -= 3_600_000_000  // the clock was set back an hour
        let sample = builder.add(stepped).samples.first
        #expect(sample?.start == Instant(milliseconds: Self.wallStart / 1000 + 1000))
    }

    /// A burst of late intervals restarts the beat clock from its arrival, which walks back over beats already
    /// placed: those are left out, and every series stays valid (offsets increasing, inside the series), one after
    /// the other.
    @Test func aBeatClockRestartedByALateBurstKeepsEverySeriesValid() {
        var builder = SampleBuilder(context: Self.context, settings: .init(seriesWindow: .seconds(60)))
        var series: [HeartbeatSeriesSample] = []
        var time = 0.0
        for _ in 0..<30 {
            time += 1
            series +=
                builder.add(Self.notification(.heartRateMeasurement, Self.hrm(60, rr: [1024]), at: time))
                .heartbeats
        }
        // Half a second later, three intervals at once: the clock says 33 s, the arrival 30.5 s; the new chain
        // walks back to 28.5 s and 29.5 s, before the beat at 30 s.
        series +=
            builder.add(
                Self.notification(.heartRateMeasurement, Self.hrm(60, rr: [1024, 1024, 1024]), at: time + 0.5)
            ).heartbeats
        for _ in 0..<100 {
            time += 1
            series +=
                builder.add(Self.notification(.heartRateMeasurement, Self.hrm(60, rr: [1024]), at: time + 0.5))
                .heartbeats
        }
        series += builder.finish().heartbeats
        #expect(series.count >= 2)
        for sample in series { #expect(sample.invalidityReason == nil, "\(sample.invalidityReason ?? "")") }
        for (earlier, later) in zip(series, series.dropFirst()) {
            #expect(earlier.end.milliseconds <= later.start.milliseconds)
        }
        // 30 beats, the burst's last one (at 30.5 s), then 100: the two that fell before 30 s are left out.
        #expect(series.flatMap(\.beats).count == 131)
        #expect(builder.counters.beatsLeftOut == 2)
    }

    @Test func rrIntervalsBecomeHeartbeatSeriesWithGapsAndVariability() {
        var builder = SampleBuilder(context: Self.context, settings: .init(seriesWindow: .seconds(60)))
        var series: [HeartbeatSeriesSample] = []
        var quantities: [QuantitySample] = []
        var sent: [UInt16] = []
        var generator = SplitMix64(seed: 3)
        var time = 0.0
        for beat in 0..<150 {
            // One notification per beat, sent when the beat ends; four in a row are lost.
            let rr = UInt16(900 + generator.next() % 200)
            time += Double(rr) / 1024
            guard !(80..<84).contains(beat) else { continue }
            sent.append(rr)
            let output = builder.add(Self.notification(.heartRateMeasurement, Self.hrm(65, rr: [rr]), at: time))
            series += output.heartbeats
            quantities += output.samples
        }
        let finished = builder.finish()
        series += finished.heartbeats
        quantities += finished.samples
        let beats = series.flatMap(\.beats)
        #expect(beats.count == sent.count)
        #expect(beats.map { UInt16(($0.rrMilliseconds * 1024 / 1000).rounded()) } == sent)
        #expect(series.count >= 3)
        // Every series covers at most its window, and beats within it follow the beat clock.
        for sample in series {
            #expect(sample.end.milliseconds - sample.start.milliseconds <= 61_000)
            #expect(sample.subject == "alice")
            for (previous, beat) in zip(sample.beats, sample.beats.dropFirst()) where !beat.precededByGap {
                #expect(abs(beat.offsetMilliseconds - previous.offsetMilliseconds - beat.rrMilliseconds) < 1e-9)
            }
        }
        // The missing notifications are marked: exactly one beat is preceded by a gap.
        #expect(beats.filter(\.precededByGap).count == 1)
        let hrv = quantities.filter { $0.type == .heartRateVariabilitySDNN }
        #expect(hrv.count == series.filter { $0.beats.count >= 20 }.count)
        #expect(hrv.allSatisfy { (10...200).contains($0.value) })
        #expect(
            hrv.allSatisfy {
                if case .quantity(_, "ms") = $0.metadata[MetadataKey.heartRateVariabilityRMSSD] { true } else { false }
            })
    }

    @Test func energyExpendedBecomesDeltasThatSurviveResetsAndSaturation() {
        var builder = SampleBuilder(context: Self.context)
        var energy: [QuantitySample] = []
        let values: [UInt16] = [100, 110, 110, 5, 65_530, 65_535, 65_535, 3]
        for (index, value) in values.enumerated() {
            energy += builder.add(
                Self.notification(.heartRateMeasurement, Self.hrm(80, energy: value), at: Double(index))
            )
            .samples.filter { $0.type == .activeEnergyBurned }
        }
        let kilojoules = energy.map { ($0.value * 4.184).rounded() }
        #expect(kilojoules == [10, 5, 65_525, 5, 3])
        #expect(energy[0].start == Instant(milliseconds: Self.wallStart / 1000))
        #expect(energy[0].end == Instant(milliseconds: Self.wallStart / 1000 + 1000))
        #expect(builder.counters.counterResets == 2)
    }

    @Test func footpodDistanceRollsOverAndStepsAreEstimatedFromCadence() {
        var context = Self.context
        context.sensorLocation = 2
        var builder = SampleBuilder(context: context)
        var samples: [QuantitySample] = []
        let totals: [UInt32] = [0xFFFF_FFF0, 0xFFFF_FFFA, 0x0000_0010, 0x0000_0018]
        for (index, total) in totals.enumerated() {
            let value = RSCMeasurement(
                speed: 768, cadence: 180, strideLength: 120, totalDistance: total, isRunning: true)
            samples += builder.add(Self.notification(.rscMeasurement, value.encoded(), at: Double(index))).samples
        }
        let distance = samples.filter { $0.type == .distanceWalkingRunning }.map(\.value)
        #expect(distance.map { ($0 * 10).rounded() } == [10, 22, 8])
        let steps = samples.filter { $0.type == .stepCount }
        #expect(steps.map(\.value) == [3, 3, 3])
        #expect(steps.allSatisfy { $0.metadata[MetadataKey.wasEstimated] == .bool(true) })
        #expect(samples.filter { $0.type == .runningSpeed }.map(\.value) == [3, 3, 3, 3])
        #expect(samples.filter { $0.type == .runningStrideLength }.map(\.value) == [1.2, 1.2, 1.2, 1.2])
        #expect(samples.filter { $0.type == .stepCadence }.map(\.value) == [180, 180, 180, 180])
        #expect(samples.allSatisfy { $0.metadata[MetadataKey.sensorLocation] == .number(2) })
    }

    @Test func watchStepsAreDeltasAndTheMidnightResetCountsFromZero() {
        var builder = SampleBuilder(context: Self.context)
        var steps: [Double] = []
        for (index, count) in [10_000, 10_040, 10_040, 12].enumerated() {
            steps += builder.add(
                Self.notification(
                    .infiniTimeStepCount, InfiniTimeStepCount(steps: UInt32(count)).encoded(), at: Double(index))
            ).samples.map(\.value)
        }
        #expect(steps == [40, 12])
    }

    @Test func pamsStepCountsAreDeltasWithinASessionAndANewSessionCountsFromZero() {
        var builder = SampleBuilder(context: Self.context)
        var steps: [Double] = []
        let summaries: [(session: UInt16, walking: UInt32, intensity: UInt32)] = [
            (1, 100, 10), (1, 150, 12), (1, 150, 12), (2, 30, 0), (2, 45, 5),
        ]
        for (index, summary) in summaries.enumerated() {
            let value = StepCounterActivitySummaryData(
                sessionID: summary.session, relativeTimestamp: UInt32(index * 10), sequenceNumber: UInt32(index),
                normalWalkingSteps: summary.walking, intensitySteps: summary.intensity)
            steps += builder.add(
                Self.notification(.stepCounterActivitySummaryData, value.encoded(), at: Double(index * 10))
            ).samples.filter { $0.type == .stepCount }.map(\.value)
        }
        #expect(steps == [52, 30, 20])
    }

    @Test func theSimulatedStepCounterAndFootpodAddUpToWhatTheyCounted() {
        for kind in [PeripheralScript.Kind.stepCounter, .footpod] {
            var peripheral = PeripheralScript(kind: kind, address: Self.strap.address, seed: 5).makePeripheral()
            let emissions = peripheral.advance(to: .seconds(600))
            var builder = SampleBuilder(context: Self.context)
            var samples: [QuantitySample] = []
            for emission in emissions {
                samples +=
                    builder.add(
                        GATTNotification(
                            peripheral: Self.strap, characteristic: emission.characteristic, value: emission.value,
                            receivedAt: Timestamp(
                                monotonic: emission.at,
                                wallMicroseconds: Self.wallStart + Int64(emission.at.milliseconds) * 1000))
                    ).samples
            }
            #expect(builder.counters.malformed == 0, "\(kind)")
            let steps = samples.filter { $0.type == .stepCount }.reduce(0) { $0 + $1.value }
            let truth = Double(peripheral.groundTruth.steps)
            // The first value is only a base, so the first interval's steps are not counted.
            #expect(steps <= truth + 1 && steps >= truth * 0.9, "\(kind): \(steps) of \(truth)")
        }
    }

    /// A burst of notifications delivered within one millisecond keeps every distinct value (a millisecond apart);
    /// the same value again in that millisecond is a repeat and keeps the instant (stored once). Another
    /// characteristic's notifications in between change nothing.
    @Test func aBurstWithinOneMillisecondKeepsEveryDistinctValue() {
        var builder = SampleBuilder(context: Self.context)
        var samples: [QuantitySample] = []
        for (rate, seconds) in [(70, 5.0), (71, 5.0002), (71, 5.0004), (72, 5.0006), (73, 6.0)] {
            samples +=
                builder.add(Self.notification(.heartRateMeasurement, Self.hrm(UInt16(rate)), at: seconds)).samples
            _ = builder.add(Self.notification(.batteryLevel, [90], at: seconds))
        }
        let start = samples[0].start.milliseconds
        #expect(samples.map(\.value) == [70, 71, 71, 72, 73])
        #expect(samples.map { $0.start.milliseconds - start } == [0, 1, 1, 2, 1_000])
        #expect(Set(samples.map(\.id)).count == 4)  // the repeat names the same sample
    }

    /// The simulated chest strap's own output, fed through the builder: every heart rate and every beat it sent.
    @Test func theSimulatedStrapsOutputIsStoredCompletely() {
        var peripheral = PeripheralScript(kind: .chestStrap, address: Self.strap.address, seed: 11).makePeripheral()
        let emissions = peripheral.advance(to: .seconds(300))
        var builder = SampleBuilder(context: Self.context)
        var output = SampleBuilder.Output()
        for emission in emissions {
            let notification = GATTNotification(
                peripheral: Self.strap, characteristic: emission.characteristic, value: emission.value,
                receivedAt: Timestamp(
                    monotonic: emission.at, wallMicroseconds: Self.wallStart + Int64(emission.at.milliseconds) * 1000))
            let step = builder.add(notification)
            output.append(contentsOf: step)
        }
        output.append(contentsOf: builder.finish())
        let truth = peripheral.groundTruth
        let rates = output.samples.filter { $0.type == .heartRate }.map { UInt16($0.value) }
        #expect(rates == truth.heartRates.filter { $0 > 0 })
        let beats = output.heartbeats.flatMap(\.beats).map { UInt16(($0.rrMilliseconds * 1024 / 1000).rounded()) }
        #expect(beats == truth.rrIntervals)
        let kilojoules = output.samples.filter { $0.type == .activeEnergyBurned }.reduce(0) { $0 + $1.value } * 4.184
        #expect(kilojoules <= truth.energyExpended + 0.001)
    }
}

extension Duration {
    fileprivate var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
