import FakeDevices
import GATT
import Testing

/// The simulated thermometer and pulse oximeter on their own: what they send decodes, when they send it, and the
/// same seed gives the same values.
@Suite struct ThermometerAndOximeterFakeTests {
    static func thermometer(seed: UInt64 = 3, interval: Double = 10) -> Thermometer {
        Thermometer(
            script: PeripheralScript(
                kind: .thermometer, address: "C0:FF:EE:00:00:53", seed: seed,
                summaryInterval: .milliseconds(Int64(interval * 1000))))
    }

    static func oximeter(seed: UInt64 = 8) -> PulseOximeter {
        PulseOximeter(script: PeripheralScript(kind: .pulseOximeter, address: "C0:FF:EE:00:00:54", seed: seed))
    }

    /// Connected and listening to both temperature characteristics from `time`.
    static func listen(_ thermometer: inout Thermometer, at time: Duration) {
        thermometer.linkChanged(connected: true, at: time)
        thermometer.subscribed(to: .temperatureMeasurement, at: time)
        thermometer.subscribed(to: .intermediateTemperature, at: time)
    }

    @Test func theThermometerSendsSettlingTemperaturesThenATimeStampedResultPerInterval() throws {
        var thermometer = Self.thermometer()
        #expect(thermometer.advance(to: .seconds(5)).isEmpty)  // 0.1-3.1 s: nobody listening
        Self.listen(&thermometer, at: .seconds(5))
        let sent = thermometer.advance(to: .seconds(25))
        let one: [BluetoothUUID] = Array(repeating: .intermediateTemperature, count: 3) + [.temperatureMeasurement]
        #expect(sent.map(\.characteristic) == one + one)
        #expect(
            sent.map(\.at)
                == [10_100, 11_100, 12_100, 13_100, 20_100, 21_100, 22_100, 23_100].map { Duration.milliseconds($0) })
        #expect(sent.map(\.isIndication) == [false, false, false, true, false, false, false, true])
        #expect(sent == thermometer.groundTruth.emissions)

        let results = try sent.filter { $0.characteristic == .temperatureMeasurement }.map {
            try TemperatureMeasurement(decoding: $0.value)
        }
        #expect(results == thermometer.measurements)
        #expect(results.map { $0.timeStamp?.description } == ["2026-11-29T10:00:13", "2026-11-29T10:00:23"])
        #expect(results.allSatisfy { $0.units == .celsius && $0.temperatureType == nil })
        #expect(results.allSatisfy { (36...37.6).contains($0.celsius ?? 0) && $0.temperature.exponent == -2 })
        // The intermediate temperatures rise towards their result and carry no time stamp.
        for cycle in 0..<2 {
            let settling = try sent[cycle * 4..<cycle * 4 + 3].map { try IntermediateTemperature(decoding: $0.value) }
            let temperatures = settling.compactMap(\.celsius)
            #expect(temperatures.count == 3 && temperatures == temperatures.sorted())
            #expect(temperatures.allSatisfy { $0 < results[cycle].celsius ?? 0 })
            #expect(settling.allSatisfy { $0.timeStamp == nil })
        }

        // The site is in Temperature Type, the interval in Measurement Interval.
        let type = try TemperatureType(decoding: thermometer.read(.temperatureType))
        #expect(type == thermometer.temperatureType)
        #expect([TemperatureType.armpit, .ear, .mouth, .tympanum].contains(type))
        #expect(try MeasurementInterval(decoding: thermometer.read(.measurementInterval)).seconds == 10)
        #expect(throws: ATTError.readNotPermitted) { try thermometer.read(.temperatureMeasurement) }
        #expect(throws: ATTError.writeNotPermitted) { try thermometer.write([5, 0], to: .measurementInterval) }
    }

    @Test func theThermometerSendsOnlyWhatIsListenedToAndItsValuesDoNotDependOnTheLink() throws {
        var always = Self.thermometer()
        Self.listen(&always, at: .zero)
        let everything = always.advance(to: .seconds(35))
        #expect(everything.count == 16)

        var late = Self.thermometer()
        late.linkChanged(connected: true, at: .zero)
        late.subscribed(to: .temperatureMeasurement, at: .seconds(15))  // results only, from 15 s
        let results = late.advance(to: .seconds(35))
        #expect(results.allSatisfy { $0.characteristic == .temperatureMeasurement })
        #expect(results == everything.filter { $0.characteristic == .temperatureMeasurement && $0.at >= .seconds(15) })
        late.linkChanged(connected: false, at: .seconds(35))
        #expect(late.advance(to: .seconds(60)).isEmpty)
        #expect(late.measurements.count == 2)

        // Same seed, same values; another seed, others.
        var again = Self.thermometer()
        Self.listen(&again, at: .zero)
        #expect(again.advance(to: .seconds(35)) == everything)
        var other = Self.thermometer(seed: 4)
        Self.listen(&other, at: .zero)
        #expect(other.advance(to: .seconds(35)) != everything)
    }

    @Test func aShortIntervalBringsTheSettlingValuesCloserTogether() throws {
        var thermometer = Self.thermometer(interval: 2)
        Self.listen(&thermometer, at: .zero)
        let sent = thermometer.advance(to: .seconds(2))
        #expect(sent.map(\.at) == [100, 600, 1100, 1600].map { Duration.milliseconds($0) })
        #expect(try MeasurementInterval(decoding: thermometer.read(.measurementInterval)).seconds == 2)
        var fast = Self.thermometer(interval: 0.25)
        #expect(try MeasurementInterval(decoding: fast.read(.measurementInterval)).seconds == 1)
    }

    @Test func theOximeterSendsContinuousValuesEverySecondAndASpotCheckNowAndThen() throws {
        var oximeter = Self.oximeter()
        let sent = oximeter.advance(to: .seconds(30))
        #expect(sent == oximeter.groundTruth.emissions)
        let continuousSent = sent.filter { $0.characteristic == .plxContinuousMeasurement }
        let spotSent = sent.filter { $0.characteristic == .plxSpotCheckMeasurement }
        #expect(continuousSent.count + spotSent.count == sent.count)
        #expect((30...31).contains(continuousSent.count))
        #expect(continuousSent.allSatisfy { !$0.isIndication } && spotSent.allSatisfy(\.isIndication))
        // A second apart; a spot-check every 10 s, half a second after a continuous value.
        let times = continuousSent.map(\.at)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == .seconds(1) })
        #expect(spotSent.map(\.at) == [10, 20].map { times[0] + .seconds($0) + .milliseconds(500) })

        let continuous = try continuousSent.map { try PLXContinuousMeasurement(decoding: $0.value) }
        #expect(continuous == oximeter.continuous)
        for value in continuous {
            #expect((92...100).contains(value.normal.spo2.value ?? 0))
            #expect((45...100).contains(value.normal.pulseRate.value ?? 0))
            #expect((0.5...6).contains(value.pulseAmplitudeIndex?.value ?? 0))
            #expect(value.measurementStatus == PulseOximeter.status && value.fast == nil && value.slow == nil)
        }
        // The values change, but gradually.
        #expect(Set(continuous.map(\.normal.pulseRate)).count > 1)
        let pulses = continuous.compactMap(\.normal.pulseRate.value)
        #expect(zip(pulses, pulses.dropFirst()).allSatisfy { abs($1 - $0) <= 5 })

        let spots = try spotSent.map { try PLXSpotCheckMeasurement(decoding: $0.value) }
        #expect(spots == oximeter.spotChecks)
        #expect(spots.allSatisfy { !$0.deviceClockNotSet && $0.measurementStatus == PulseOximeter.status })
        #expect(spots.allSatisfy { (92...100).contains($0.spo2.value ?? 0) && $0.pulseAmplitudeIndex != nil })
        for (spot, emission) in zip(spots, spotSent) {
            let second = emission.at.components.seconds
            #expect(spot.timeStamp?.description == "2026-11-29T10:00:\(second)")
        }

        #expect(try PLXFeatures(decoding: oximeter.read(.plxFeatures)) == PulseOximeter.features)
        #expect(PulseOximeter.features.supportedFeatures == 0x0049)  // status support, time stamp, PAI
        #expect(throws: ATTError.readNotPermitted) { try oximeter.read(.plxContinuousMeasurement) }
    }

    @Test func theOximeterIsDeterministicPerSeedHoweverItIsDriven() {
        var once = Self.oximeter()
        let all = once.advance(to: .seconds(60))
        var stepped = Self.oximeter()
        var inSteps: [PeripheralEmission] = []
        for tenth in 1...600 { inSteps += stepped.advance(to: .milliseconds(tenth * 100)) }
        #expect(inSteps == all)
        var other = Self.oximeter(seed: 9)
        #expect(other.advance(to: .seconds(60)) != all)
    }

    @Test(arguments: [PeripheralScript.Kind.thermometer, .pulseOximeter])
    func scenariosKnowTheKinds(_ kind: PeripheralScript.Kind) throws {
        let scenarioKind = try #require(FakeBlueZScenario.Kind.allCases.first { $0.scriptKind == kind })
        let script = FakeBlueZScenario.Peripheral(kind: scenarioKind, address: "00:00:00:00:00:01").script
        let peripheral = script.makePeripheral()
        #expect(peripheral.services.contains { $0.uuid == .deviceInformationService })
        #expect(PeripheralScript.Kind(rawValue: kind.rawValue) == kind)
        #expect(scenarioKind.rawValue == (kind == .thermometer ? "thermometer" : "pulseOximeter"))
    }
}
