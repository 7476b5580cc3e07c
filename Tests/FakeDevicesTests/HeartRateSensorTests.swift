import FakeDevices
import GATT
import Testing

/// The chest strap and the wrist monitor: their payloads decode to what their ground truth says.
@Suite struct HeartRateSensorTests {
    static let strap = PeripheralScript(kind: .chestStrap, address: "C0:FF:EE:00:00:01", seed: 7)

    static func measurements(_ truth: GroundTruth) throws -> [HeartRateMeasurement] {
        try truth.emissions.filter { $0.characteristic == .heartRateMeasurement }.map {
            try HeartRateMeasurement(decoding: $0.value)
        }
    }

    @Test func chestStrapRRIntervalsAddUpToTheElapsedTime() throws {
        var strap = HeartRateSensor(script: Self.strap, profile: .chestStrap)
        _ = strap.advance(to: .seconds(600))
        let truth = strap.groundTruth
        let decoded = try Self.measurements(truth)
        #expect(decoded.count == 600)
        #expect(decoded.map(\.heartRate) == truth.heartRates)
        #expect(decoded.flatMap { Array($0.rrIntervals) } == truth.rrIntervals)
        // Beats are conserved: the intervals sent cover the time from the first beat to the last one sent.
        let seconds = Double(truth.rrIntervals.reduce(0) { $0 + Int($1) }) / 1024
        #expect(seconds > 600 - 3 && seconds <= 600, "RR sum \(seconds) s over 600 s")
        #expect(truth.beats > 400)
        #expect(decoded.allSatisfy { $0.sensorContact == .detected && $0.format == .uint8 })
        #expect(decoded.allSatisfy { (40...200).contains($0.heartRate) })
        // Smooth: no jump of more than 6 bpm between consecutive measurements.
        #expect(zip(decoded, decoded.dropFirst()).allSatisfy { abs(Int($0.heartRate) - Int($1.heartRate)) <= 6 })
        // RR intervals agree with the heart rate they were sent with (within the curve's drift over a second).
        for measurement in decoded {
            for rr in measurement.rrIntervals {
                #expect(abs(61_440 / Double(rr) - Double(measurement.heartRate)) < 12)
            }
        }
    }

    @Test func energyIsSentEveryTenthMeasurementAndAccumulates() throws {
        var strap = HeartRateSensor(script: Self.strap, profile: .chestStrap)
        _ = strap.advance(to: .seconds(300))
        let decoded = try Self.measurements(strap.groundTruth)
        for (index, measurement) in decoded.enumerated() {
            #expect((measurement.energyExpended != nil) == (index % 10 == 0))
        }
        let energies = decoded.compactMap(\.energyExpended)
        #expect(energies.count == 30)
        #expect(zip(energies, energies.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(energies.last.map { $0 > 15 } == true, "about 4-20 kJ/min: \(energies)")
        let truth = strap.groundTruth.energyExpended
        #expect(energies.last.map { Double($0) <= truth && truth < Double($0) + 10 } == true)
    }

    @Test func energySaturatesAtFFFFAndTheControlPointResetsIt() throws {
        var script = Self.strap
        script.initialEnergyExpended = 0xFFF0
        var strap = HeartRateSensor(script: script, profile: .chestStrap)
        _ = strap.advance(to: .seconds(300))
        let energies = try Self.measurements(strap.groundTruth).compactMap(\.energyExpended)
        #expect(energies.first.map { $0 >= 0xFFF0 } == true)
        #expect(energies.last == HeartRateMeasurement.energySaturated)
        #expect(strap.groundTruth.energyExpended > 65_535)

        try strap.write(HeartRateControlPoint.resetEnergyExpended.encoded(), to: .heartRateControlPoint)
        #expect(strap.groundTruth.energyExpended == 0)
        let after = strap.advance(to: .seconds(320)).filter { $0.characteristic == .heartRateMeasurement }
        let reset = try after.compactMap { try HeartRateMeasurement(decoding: $0.value).energyExpended }
        #expect(!reset.isEmpty && reset.allSatisfy { $0 < 10 })
        #expect(throws: ATTError.applicationError80) { try strap.write([0x02], to: .heartRateControlPoint) }
        #expect(throws: ATTError.readNotPermitted) { try strap.read(.heartRateMeasurement) }
    }

    @Test func chestStrapReadsLocationDeviceInformationAndADrainingBattery() throws {
        var script = Self.strap
        script.batteryDrainInterval = .seconds(60)
        var strap = HeartRateSensor(script: script, profile: .chestStrap)
        #expect(try BodySensorLocation(decoding: strap.read(.bodySensorLocation)) == .chest)
        let info = strap.deviceInformation
        #expect(try ManufacturerNameString(decoding: strap.read(.manufacturerNameString)).value == info.manufacturer)
        #expect(try ModelNumberString(decoding: strap.read(.modelNumberString)).value == "chest-strap")
        #expect(try SerialNumberString(decoding: strap.read(.serialNumberString)).value == info.serialNumber)
        #expect(
            try FirmwareRevisionString(decoding: strap.read(.firmwareRevisionString)).value == info.firmwareRevision)
        #expect(
            try HardwareRevisionString(decoding: strap.read(.hardwareRevisionString)).value == info.hardwareRevision)
        #expect(
            try SoftwareRevisionString(decoding: strap.read(.softwareRevisionString)).value == info.softwareRevision)
        #expect(try SystemID(decoding: strap.read(.systemID)) == info.systemID)
        #expect(try PnPID(decoding: strap.read(.pnpID)) == info.pnpID)
        let start = try BatteryLevel(decoding: strap.read(.batteryLevel)).percent
        let levels = try strap.advance(to: .seconds(601)).filter { $0.characteristic == .batteryLevel }.map {
            try BatteryLevel(decoding: $0.value).percent
        }
        #expect(levels.count == 10)
        #expect(levels.first == start - 1)
        #expect(try BatteryLevel(decoding: strap.read(.batteryLevel)).percent == start - 10)
    }

    @Test func wristMonitorSendsNoRRAndNoContact() throws {
        let script = PeripheralScript(kind: .wristMonitor, address: "C0:FF:EE:00:00:02", seed: 3)
        guard var wrist = script.makePeripheral() as? HeartRateSensor else {
            Issue.record("a wrist monitor is a HeartRateSensor")
            return
        }
        _ = wrist.advance(to: .seconds(120))
        let decoded = try Self.measurements(wrist.groundTruth)
        #expect(decoded.count == 120)
        #expect(decoded.allSatisfy { $0.rrIntervals.isEmpty && $0.sensorContact == .notSupported })
        #expect(decoded.allSatisfy { $0.energyExpended == nil && $0.flags == 0 })
        #expect(wrist.groundTruth.beats == 0)
        #expect(try BodySensorLocation(decoding: wrist.read(.bodySensorLocation)) == .wrist)
        let heart = wrist.services.first { $0.uuid == .heartRateService }
        #expect(heart?.characteristics.map(\.uuid) == [.heartRateMeasurement, .bodySensorLocation])
    }
}
