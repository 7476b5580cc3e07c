import FakeDevices
import GATT
import Testing

/// The footpod, the PAMS step counter and the InfiniTime watch.
@Suite struct StepAndFootpodTests {
    static let footpod = PeripheralScript(kind: .footpod, address: "F0:0D:00:00:00:01", seed: 11)

    @Test func footpodDistanceDeltasAddUpToItsGroundTruth() throws {
        var pod = Footpod(script: Self.footpod)
        _ = pod.advance(to: .seconds(900))
        let truth = pod.groundTruth
        let decoded = try truth.emissions.filter { $0.characteristic == .rscMeasurement }.map {
            try RSCMeasurement(decoding: $0.value)
        }
        #expect(decoded.count == 900)
        var previous: UInt32 = 0
        var sum = 0.0
        for measurement in decoded {
            let total = try #require(measurement.totalDistance)
            #expect(total >= previous)
            sum += Double(total - previous) / 10
            previous = total
            let stride = try #require(measurement.strideLengthMeters)
            // speed = cadence (steps/min) / 60 × stride, to the rounding of the three fields.
            #expect(abs(Double(measurement.cadence) / 60 * stride - measurement.metersPerSecond) < 0.05)
            // Running from 2.2 m/s, up to the 1/256 m/s rounding of the speed field.
            let speed = measurement.metersPerSecond
            if abs(speed - Footpod.runningThreshold) > 0.01 {
                #expect(measurement.isRunning == (speed > Footpod.runningThreshold))
            }
        }
        #expect(abs(sum - truth.distanceMeters) < 0.1, "\(sum) m sent, \(truth.distanceMeters) m run")
        #expect(decoded.contains { $0.isRunning } && decoded.contains { !$0.isRunning })
        #expect(truth.steps > 1000)
        #expect(try RSCFeature(decoding: pod.read(.rscFeature)) == Footpod.features)
        #expect(Footpod.features.contains(.walkingOrRunningStatusSupported))
        #expect(try SensorLocation(decoding: pod.read(.sensorLocation)) == .inShoe)
    }

    @Test func footpodControlPointAnswersByIndication() throws {
        var pod = Footpod(script: Self.footpod)
        _ = pod.advance(to: .seconds(10))
        try pod.write(SCControlPoint.setCumulativeValue(50_000).encoded(), to: .scControlPoint)
        var out = pod.advance(to: .seconds(12))
        #expect(out.first?.isIndication == true)
        #expect(
            try out.first.map { try SCControlPoint(decoding: $0.value) }
                == .response(requestOpCode: 1, value: .success, parameter: []))
        let next = try #require(out.first { $0.characteristic == .rscMeasurement })
        let total = try #require(try RSCMeasurement(decoding: next.value).totalDistance)
        #expect(total >= 50_000 && total < 50_100)

        try pod.write(SCControlPoint.requestSupportedSensorLocations.encoded(), to: .scControlPoint)
        #expect(throws: ATTError.applicationError80) {
            try pod.write(SCControlPoint.requestSupportedSensorLocations.encoded(), to: .scControlPoint)
        }
        out = pod.advance(to: .seconds(12))
        let response = try SCControlPoint(decoding: try #require(out.first).value)
        #expect(response.supportedSensorLocations == Footpod.supportedLocations)

        try pod.write(SCControlPoint.updateSensorLocation(.hip).encoded(), to: .scControlPoint)
        _ = pod.advance(to: .seconds(12))
        #expect(try SensorLocation(decoding: pod.read(.sensorLocation)) == .hip)
        try pod.write(SCControlPoint.startSensorCalibration.encoded(), to: .scControlPoint)
        #expect(
            try pod.advance(to: .seconds(12)).first.map { try SCControlPoint(decoding: $0.value) }
                == .response(requestOpCode: 2, value: .opCodeNotSupported, parameter: []))
    }

    @Test func pamsStepsAreCumulativeAndIndicated() throws {
        let script = PeripheralScript(kind: .stepCounter, address: "5E:E0:00:00:00:01", seed: 5)
        var counter = StepCounter(script: script)
        _ = counter.advance(to: .seconds(600))
        let truth = counter.groundTruth
        let summaries = truth.emissions.filter { $0.characteristic == .stepCounterActivitySummaryData }
        #expect(summaries.count == 60 && summaries.allSatisfy(\.isIndication))
        let decoded = try summaries.map { try StepCounterActivitySummaryData(decoding: $0.value) }
        #expect(decoded.map(\.sequenceNumber) == Array(1...60))
        let steps = decoded.compactMap(\.normalWalkingSteps)
        #expect(steps.count == 60)
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(steps.last == truth.steps && truth.steps > 100)
        #expect(decoded.allSatisfy { $0.sessionID == counter.sessionID && $0.header == 0x80 })
        #expect(decoded.last?.relativeTimestamp == 600)
    }

    @Test func infiniTimeSendsHeartRateAndVendorSteps() throws {
        let script = PeripheralScript(kind: .infiniTimeWatch, address: "1F:1F:00:00:00:01", seed: 9)
        var watch = InfiniTimeWatch(script: script)
        _ = watch.advance(to: .seconds(300))
        let truth = watch.groundTruth
        #expect(zip(truth.emissions, truth.emissions.dropFirst()).allSatisfy { $0.at <= $1.at })
        let hr = try truth.emissions.filter { $0.characteristic == .heartRateMeasurement }.map {
            try HeartRateMeasurement(decoding: $0.value)
        }
        #expect(hr.count == 300 && hr.allSatisfy { $0.rrIntervals.isEmpty && $0.sensorContact == .notSupported })
        let steps = try truth.emissions.filter { $0.characteristic == .infiniTimeStepCount }.map {
            try InfiniTimeStepCount(decoding: $0.value).steps
        }
        #expect(!steps.isEmpty)
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0 < $1 })
        #expect(steps.last == truth.steps)
        #expect(try InfiniTimeStepCount(decoding: watch.read(.infiniTimeStepCount)).steps == truth.steps)
        #expect(watch.services.map(\.uuid).contains(.infiniTimeMotionService))
    }
}
